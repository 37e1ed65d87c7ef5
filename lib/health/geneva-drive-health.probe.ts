import { Injectable } from '@nestjs/common';
import { withTimeout } from '../common/with-timeout';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { WorkflowRepository } from '../ports/workflow.repository';
import { isStepJobTransportProbe } from '../queue/step-job-transport-probe';
import { StepJobQueue } from '../queue/step-job.queue';
import type { HealthFindings, HealthThresholds } from './health-findings.interface';

/** How long the database and the transport get to answer before they count as down. */
const ANSWER_TIMEOUT_MS = 2_000;

/**
 * The readings behind `GenevaDriveHealthIndicator` (the `/terminus` subpath): the database and
 * the transport each answer a round trip within 2 s, and the backlog counts stay within the
 * caller's limits. Counting stops one past a limit, so a large backlog costs no more than a
 * small one.
 */
@Injectable()
export class GenevaDriveHealthProbe {
  constructor(
    private readonly repository: WorkflowRepository,
    private readonly queue: StepJobQueue,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  async read(thresholds: HealthThresholds = {}): Promise<HealthFindings> {
    validateThresholds(thresholds, this.options.waitingVisibilityThresholdMs);
    const problems: string[] = [];
    const findings: HealthFindings = { healthy: true, problems, database: 'up', transport: 'up' };

    try {
      await withTimeout(this.repository.ping(), ANSWER_TIMEOUT_MS, notAnswered('the database'));
    } catch (error) {
      findings.database = 'down';
      problems.push(`database: ${messageOf(error)}`);
    }
    if (isStepJobTransportProbe(this.queue)) {
      try {
        findings.queues = await withTimeout(
          this.queue.transportStatus(),
          ANSWER_TIMEOUT_MS,
          notAnswered('the transport'),
        );
      } catch (error) {
        findings.transport = 'down';
        problems.push(`transport: ${messageOf(error)}`);
      }
    } else {
      findings.transport = 'in-process';
    }

    if (findings.database === 'up') {
      const now = Date.now();
      if (thresholds.maxStuckScheduled !== undefined) {
        const cutoff = new Date(now - this.options.housekeeping.stuckScheduledThresholdMs);
        const stuck = await this.repository.stuckExecutions(
          'scheduled',
          cutoff,
          thresholds.maxStuckScheduled + 1,
          null,
        );
        findings.stuckScheduled = stuck.length;
        if (stuck.length > thresholds.maxStuckScheduled) {
          problems.push(
            `more than ${thresholds.maxStuckScheduled} scheduled step(s) overdue by more than the stuck-scheduled threshold`,
          );
        }
      }
      const visibilityMs = this.options.waitingVisibilityThresholdMs;
      if (thresholds.maxWaitingOverdue !== undefined && visibilityMs !== null) {
        const counts = this.repository.features.signals
          ? await this.repository.waitingCounts(new Date(now - visibilityMs))
          : [];
        const overdue = counts.reduce((total, row) => total + row.count, 0);
        findings.waitingOverdue = overdue;
        if (overdue > thresholds.maxWaitingOverdue) {
          problems.push(
            `${overdue} step(s) waiting for a signal longer than waitingVisibilityThreshold (limit ${thresholds.maxWaitingOverdue})`,
          );
        }
      }
    }
    findings.healthy = problems.length === 0;
    return findings;
  }
}

function validateThresholds(thresholds: HealthThresholds, visibilityMs: number | null): void {
  for (const key of ['maxWaitingOverdue', 'maxStuckScheduled'] as const) {
    const value = thresholds[key];
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
      throw new InvalidArgumentError(
        `isHealthy() ${key} must be a whole number of executions (0 or more), but was ${String(value)}.`,
      );
    }
  }
  if (thresholds.maxWaitingOverdue !== undefined && visibilityMs === null) {
    throw new InvalidArgumentError(
      'isHealthy() maxWaitingOverdue counts steps waiting longer than waitingVisibilityThreshold, which is null: set that module option, or leave maxWaitingOverdue out.',
    );
  }
}

function notAnswered(what: string): string {
  return `${what} did not answer within ${ANSWER_TIMEOUT_MS} ms`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
