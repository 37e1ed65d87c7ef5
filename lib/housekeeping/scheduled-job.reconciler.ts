import { Injectable, Logger, type LoggerService } from '@nestjs/common';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import type { ErrorReportContext } from '../interfaces/module-options.interface';
import { ErrorReportingService } from '../observability/error-reporting.service';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { RUNNABLE_WORKFLOW_STATES } from '../common/states';
import { withTimeout } from '../common/with-timeout';
import { WorkflowRepository } from '../ports/workflow.repository';
import { StepJobQueue } from '../queue/step-job.queue';
import {
  isStepJobInspector,
  type StepJobInspector,
  type StepJobPresence,
} from '../queue/step-job-inspector';
import { asError } from '../scheduling/execution-transitions';
import { WorkflowScheduler } from '../scheduling/workflow-scheduler';

/**
 * How long a `scheduled` row must have been left alone before its job is looked for: the job of a
 * row that has just committed is added right after the commit, and must not be taken for lost.
 */
export const RECONCILE_GRACE_MS = 5_000;

/** What one reconciliation did. */
export interface ReconciliationResult {
  /** `scheduled` executions whose job was looked up. */
  checked: number;
  /** Executions re-enqueued because their job was missing or had already finished. */
  reenqueued: number;
  /** Ids of the re-enqueued executions. */
  executionIds: string[];
  /** Which rows had their job looked up, for `leftAlone()` (null when nothing was inspected). */
  coverage: ReconciliationCoverage | null;
}

/**
 * The rows one reconciliation looked up: every `scheduled` row of a registered class with a job id,
 * settled before `settledBefore`, up to `through` in the walk's (`scheduled_for`, id) order (null:
 * the walk ran to the end).
 */
export interface ReconciliationCoverage {
  settledBefore: Date;
  through: { scheduledFor: Date; id: string } | null;
}

/** A candidate row, the queue its job belongs in, and what that queue knows of the job. */
interface Candidate {
  execution: StepExecutionEntity;
  queue: string;
  presence?: StepJobPresence;
}

/** How long one batch of job lookups may take (a command to an unreachable Redis can hang). */
const LOOKUP_TIMEOUT_MS = 10_000;

/**
 * Compares the `scheduled` executions of ready and performing workflows (due or not) with the
 * queue's jobs and re-enqueues, under a fresh job id, every execution whose latest job (`job_id`)
 * the queue no longer holds or has already finished: a Redis flush or restart without persistence,
 * a job added before its row was visible and dropped, a process that died between the commit and
 * the enqueue. Lost work is then recovered at the next housekeeping run instead of after
 * `stuckScheduledThreshold`.
 *
 * Rows younger than `RECONCILE_GRACE_MS` (by `updated_at`) are left alone: their job may still be
 * on its way. Each re-enqueue happens under the workflow then execution row locks, only if the row
 * is still `scheduled` with the same `job_id` and the job is still absent, so concurrent
 * reconciliations (several processes) never re-enqueue a row twice. A duplicate job is harmless
 * anyway: the runner skips an execution that is no longer `scheduled`. Needs a queue that can be
 * inspected (BullMQ); with the testing module's in-process queue it does nothing.
 */
@Injectable()
export class ScheduledJobReconciler {
  private readonly defaultLogger = new Logger('GenevaDrive');

  constructor(
    private readonly repository: WorkflowRepository,
    private readonly scheduler: WorkflowScheduler,
    private readonly registry: WorkflowRegistry,
    private readonly queue: StepJobQueue,
    private readonly errors: ErrorReportingService,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  private get logger(): LoggerService {
    return this.options.logger ?? this.defaultLogger;
  }

  /** Whether this process's queue can be inspected (BullMQ). */
  get supported(): boolean {
    return isStepJobInspector(this.queue);
  }

  /**
   * One pass over every `scheduled` execution of a ready or performing workflow, in keyset pages
   * of `batchSize`. `graceMs` overrides `RECONCILE_GRACE_MS`.
   */
  async reconcile(
    options: { batchSize?: number; graceMs?: number; shouldStop?: () => boolean } = {},
  ): Promise<ReconciliationResult> {
    const result: ReconciliationResult = {
      checked: 0,
      reenqueued: 0,
      executionIds: [],
      coverage: null,
    };
    const inspector = isStepJobInspector(this.queue) ? this.queue : null;
    if (!inspector) return result;
    const batchSize = options.batchSize ?? this.options.housekeeping.batchSize;
    const shouldStop = options.shouldStop ?? (() => false);
    const settledBefore = new Date(Date.now() - (options.graceMs ?? RECONCILE_GRACE_MS));
    let after: StepExecutionEntity | null = null;
    let complete = false;
    while (!shouldStop()) {
      const { executions, workflows } = await this.repository.scheduledExecutions(
        settledBefore,
        batchSize,
        after,
      );
      const candidates = this.candidates(executions, workflows);
      result.checked += candidates.length;
      for (const candidate of await this.lost(inspector, candidates)) {
        if (shouldStop()) break;
        if (await this.reenqueue(candidate)) {
          result.reenqueued += 1;
          result.executionIds.push(candidate.execution.id);
        }
      }
      if (executions.length > 0) after = executions[executions.length - 1];
      if (executions.length < batchSize) {
        complete = true;
        break;
      }
    }
    // A walk cut short (shutdown, the run's time bound) covers the pages it looked up.
    if (complete) result.coverage = { settledBefore, through: null };
    else if (after) {
      result.coverage = {
        settledBefore,
        through: { scheduledFor: after.scheduledFor, id: after.id },
      };
    }
    if (result.reenqueued > 0) {
      this.logger.log(
        `[Housekeeping] Re-enqueued ${result.reenqueued} scheduled step execution(s) whose job was lost (${result.checked} checked)`,
      );
    }
    return result;
  }

  /**
   * The ids of those executions stuck-scheduled recovery must leave alone: those whose latest job
   * (`job_id`) the queue holds and has not finished (a queue that is behind, not a lost job), and
   * those `coverage` says this run's reconciliation already looked up (it re-enqueued the lost ones
   * and left the queued ones). Only the other rows' jobs are looked up here, so a housekeeping run
   * asks the queue about each overdue row once. Empty when the queue cannot be inspected.
   */
  async leftAlone(
    executions: StepExecutionEntity[],
    coverage: ReconciliationCoverage | null,
  ): Promise<Set<string>> {
    const inspector = isStepJobInspector(this.queue) ? this.queue : null;
    const ids = new Set<string>();
    if (!inspector || executions.length === 0) return ids;
    const workflows = await this.repository.workflowsOf(
      executions.map((execution) => execution.workflowId),
    );
    const unchecked: Candidate[] = [];
    for (const candidate of this.candidates(executions, workflows)) {
      if (coverage && covers(coverage, candidate.execution)) ids.add(candidate.execution.id);
      else unchecked.push(candidate);
    }
    if (unchecked.length > 0) await this.lookUp(inspector, unchecked);
    for (const { execution, presence } of unchecked) {
      if (presence === 'pending') ids.add(execution.id);
    }
    return ids;
  }

  /**
   * The queue each execution's job belongs in (class < instance < step job options). Executions
   * of an unregistered class are left to stuck-scheduled recovery, which reports them.
   */
  private candidates(
    executions: StepExecutionEntity[],
    workflows: Map<string, WorkflowEntity>,
  ): Candidate[] {
    const candidates: Candidate[] = [];
    for (const execution of executions) {
      const workflow = workflows.get(execution.workflowId);
      const definition = workflow && this.registry.findByName(workflow.type);
      if (!workflow || !definition || !execution.jobId) continue;
      const step = definition.steps.named(execution.stepName);
      const queue = step
        ? this.scheduler.mergedJobOptions(definition, workflow, step).queue
        : definition.stepJobOptions.queue;
      candidates.push({ execution, queue: queue ?? this.options.defaultQueue });
    }
    return candidates;
  }

  /** The candidates whose latest job is missing or finished. */
  private async lost(inspector: StepJobInspector, candidates: Candidate[]): Promise<Candidate[]> {
    await this.lookUp(inspector, candidates);
    return candidates.filter((candidate) => candidate.presence !== 'pending');
  }

  /** Sets each candidate's `presence`, looked up per queue in batches. */
  private async lookUp(inspector: StepJobInspector, candidates: Candidate[]): Promise<void> {
    const byQueue = new Map<string, Candidate[]>();
    for (const candidate of candidates) {
      byQueue.set(candidate.queue, [...(byQueue.get(candidate.queue) ?? []), candidate]);
    }
    for (const [queue, group] of byQueue) {
      const presence = await withTimeout(
        inspector.jobPresence(
          queue,
          group.map(({ execution }) => execution.jobId!),
        ),
        LOOKUP_TIMEOUT_MS,
        `Timed out after ${LOOKUP_TIMEOUT_MS} ms looking up ${group.length} job(s) in queue '${queue}'; is Redis reachable?`,
      );
      for (const candidate of group) {
        candidate.presence = presence.get(candidate.execution.jobId!) ?? 'missing';
      }
    }
  }

  /** Re-enqueues one execution if, under its locks, it is still scheduled with the same job id. */
  private async reenqueue({ execution: candidate, queue, presence }: Candidate): Promise<boolean> {
    const context: ErrorReportContext = {
      workflowId: candidate.workflowId,
      workflowClass: '',
      stepExecutionId: candidate.id,
      stepName: candidate.stepName,
      heroType: null,
      heroId: null,
    };
    try {
      return await this.repository.transaction(async (uow) => {
        const { workflow, execution } = await this.repository.lockForStep(
          uow,
          candidate.workflowId,
          candidate.id,
        );
        const definition = workflow && this.registry.findByName(workflow.type);
        if (!workflow || !execution || !definition) return false;
        Object.assign(context, {
          workflowClass: workflow.type,
          heroType: workflow.heroType,
          heroId: workflow.heroId,
        });
        // Someone else moved it on meanwhile (a worker ran it, resume/recovery re-enqueued it).
        if (execution.state !== 'scheduled' || execution.jobId !== candidate.jobId) return false;
        if (!RUNNABLE_WORKFLOW_STATES.includes(workflow.state)) return false;
        this.logger.log(
          `[Housekeeping] Re-enqueuing ${workflow.type} id=${workflow.id} execution_id=${execution.id} step_name=${execution.stepName}: ` +
            `job ${execution.jobId} is ${presence} in queue '${queue}'`,
        );
        await this.scheduler.reenqueueExecution(uow, workflow, definition, execution);
        return true;
      });
    } catch (error) {
      const failure = asError(error);
      this.logger.error(
        `[Housekeeping] Could not reconcile step execution ${candidate.id}: ${failure.message}`,
      );
      await this.errors.report(failure, context);
      return false;
    }
  }
}

/** Whether the reconciliation that left `coverage` looked up `execution`'s job. */
function covers(coverage: ReconciliationCoverage, execution: StepExecutionEntity): boolean {
  if (!(execution.updatedAt < coverage.settledBefore)) return false;
  const { through } = coverage;
  if (!through) return true;
  const at = execution.scheduledFor.getTime();
  const last = through.scheduledFor.getTime();
  return at < last || (at === last && execution.id <= through.id);
}
