import { Injectable, Logger, type LoggerService } from '@nestjs/common';
import { RUNNABLE_WORKFLOW_STATES } from '../common/states';
import {
  WorkflowRepository,
  type RepositoryTransaction,
  type StuckKind,
  type StuckPageStart,
} from '../ports/workflow.repository';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import { StepConfigurationError } from '../errors/step-configuration.error';
import { StepNotDefinedError } from '../errors/step-not-defined.error';
import type { ErrorReportContext } from '../interfaces/module-options.interface';
import { ErrorReportingService } from '../observability/error-reporting.service';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { asError, terminalTransition } from '../scheduling/execution-transitions';
import { WorkflowScheduler } from '../scheduling/workflow-scheduler';
import { ScheduledJobReconciler, type ReconciliationResult } from './scheduled-job.reconciler';

/** Whether a row was recovered, and an error to report once its transaction committed. */
interface RecoveryVerdict {
  recovered: boolean;
  report: Error | null;
}

/**
 * Recovers step executions stuck `in_progress` (the worker died mid-step: `started_at` older than
 * `stuckInProgressThreshold`) or `scheduled` (the job was lost: `scheduled_for` older than
 * `stuckScheduledThreshold`, workflow ready or performing), oldest first, in keyset pages of
 * `batchSize`. Each row is handled in its own transaction under the workflow then execution row
 * locks, and only if it is still stuck; a row that fails is reported and skipped (the keyset
 * moves past it, so a run never refetches it). `waiting` executions are never stuck.
 */
@Injectable()
export class StuckExecutionRecoverer {
  private readonly defaultLogger = new Logger('GenevaDrive');

  constructor(
    private readonly repository: WorkflowRepository,
    private readonly scheduler: WorkflowScheduler,
    private readonly registry: WorkflowRegistry,
    private readonly errors: ErrorReportingService,
    private readonly reconciler: ScheduledJobReconciler,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  private get logger(): LoggerService {
    return this.options.logger ?? this.defaultLogger;
  }

  /**
   * Recovers every execution of `kind` stuck since before `cutoff`; resolves the number recovered.
   * For `scheduled`, `reconciled` is what this run's reconciliation did: the rows it re-enqueued
   * and the rows whose job it looked up are left alone without asking the queue again.
   */
  async recover(
    kind: StuckKind,
    cutoff: Date,
    batchSize: number,
    shouldStop: () => boolean,
    reconciled: Pick<ReconciliationResult, 'executionIds' | 'coverage'> | null = null,
  ): Promise<number> {
    let recovered = 0;
    let after: StuckPageStart | null = null;
    const reenqueued = new Set(reconciled?.executionIds);
    while (!shouldStop()) {
      const page = await this.repository.stuckExecutions(kind, cutoff, batchSize, after);
      // Overdue but still queued: the queue is behind. Re-enqueuing would only add jobs.
      const leftAlone =
        kind === 'scheduled'
          ? await this.reconciler.leftAlone(
              page.filter((execution) => !reenqueued.has(execution.id)),
              reconciled?.coverage ?? null,
            )
          : new Set<string>();
      for (const candidate of page) {
        if (shouldStop()) break;
        if (reenqueued.has(candidate.id) || leftAlone.has(candidate.id)) continue;
        if (await this.recoverOne(kind, candidate, cutoff)) recovered += 1;
      }
      if (page.length < batchSize) break;
      const last = page[page.length - 1];
      after = { at: kind === 'in_progress' ? last.startedAt! : last.scheduledFor, id: last.id };
    }
    return recovered;
  }

  /** One row, in its own transaction; errors are reported and the row skipped. */
  private async recoverOne(
    kind: StuckKind,
    candidate: StepExecutionEntity,
    cutoff: Date,
  ): Promise<boolean> {
    const context: ErrorReportContext = {
      workflowId: candidate.workflowId,
      workflowClass: '',
      stepExecutionId: candidate.id,
      stepName: candidate.stepName,
      heroType: null,
      heroId: null,
    };
    try {
      const { recovered, report } = await this.repository.transaction<RecoveryVerdict>(
        async (uow) => {
          const skipped: RecoveryVerdict = { recovered: false, report: null };
          const { workflow, execution } = await this.repository.lockForStep(
            uow,
            candidate.workflowId,
            candidate.id,
          );
          if (!workflow || !execution || !stillStuck(kind, workflow, execution, cutoff))
            return skipped;
          Object.assign(context, {
            workflowClass: workflow.type,
            heroType: workflow.heroType,
            heroId: workflow.heroId,
          });
          const label = `${workflow.type} id=${workflow.id} execution_id=${execution.id} step_name=${execution.stepName}`;
          if (this.options.housekeeping.stuckRecoveryAction === 'cancel') {
            this.logger.log(`[Housekeeping] Canceling ${label}, stuck ${kind}`);
            await this.cancel(uow, workflow, execution);
            return { recovered: true, report: null };
          }
          const definition = this.registry.findByName(workflow.type);
          if (!definition) {
            throw new StepConfigurationError(
              `Housekeeping cannot recover step execution ${execution.id} (stuck ${kind}): no workflow is registered as '${workflow.type}'. ` +
                `Register a class under that name (@Workflow({ name: '${workflow.type}' })), or set stuckRecoveryAction: 'cancel'.`,
            );
          }
          this.logger.log(`[Housekeeping] Reattempting ${label}, stuck ${kind}`);
          if (kind === 'scheduled') {
            // The job was lost: the same execution gets a new job (a fresh job id), due now, so
            // the next runs count its threshold from here and do not recover it again meanwhile.
            await this.repository.updateExecution(uow, execution, { scheduledFor: new Date() });
            await this.scheduler.reenqueueExecution(uow, workflow, definition, execution);
            return { recovered: true, report: null };
          }
          return {
            recovered: true,
            report: await this.reattemptInProgress(uow, workflow, execution, definition),
          };
        },
      );
      if (report) await this.errors.report(report, context);
      return recovered;
    } catch (error) {
      const failure = asError(error);
      this.logger.error(
        `[Housekeeping] Could not recover step execution ${candidate.id}: ${failure.message}`,
      );
      await this.errors.report(failure, context);
      return false;
    }
  }

  /** `cancel`: the execution ends `canceled/recovered`, an ongoing workflow is canceled. */
  private async cancel(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    execution: StepExecutionEntity,
  ): Promise<void> {
    await this.repository.updateExecution(
      uow,
      execution,
      terminalTransition('canceled', 'recovered'),
    );
    if (workflow.state === 'finished' || workflow.state === 'canceled') return;
    await this.repository.updateWorkflow(uow, workflow, {
      state: 'canceled',
      transitionedAt: new Date(),
      currentStepName: null,
    });
  }

  /**
   * `reattempt` of an in-progress execution: it ends `completed/recovered` (keeping its signal
   * pin) and the step runs again at once: a resumable step through a successor that keeps the
   * cursor and the pin, any other step through a fresh execution (a `waitFor` step re-claims its
   * still-claimed signal at the gate). Resolves an error to report when the step cannot be run.
   */
  private async reattemptInProgress(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    execution: StepExecutionEntity,
    definition: WorkflowDefinition,
  ): Promise<Error | null> {
    if (workflow.state === 'finished' || workflow.state === 'canceled') {
      // The workflow ended while the step hung: nothing will run again.
      await this.repository.updateExecution(
        uow,
        execution,
        terminalTransition('canceled', 'recovered'),
      );
      return null;
    }
    await this.repository.updateExecution(
      uow,
      execution,
      terminalTransition('completed', 'recovered'),
    );
    const step = definition.steps.named(execution.stepName);
    if (workflow.state === 'paused') {
      // An operator paused it mid-step: point at the step so resume() runs it again; a resumable
      // chain gets its successor now, without a job, for resume() to enqueue.
      await this.repository.updateWorkflow(uow, workflow, {
        currentStepName: null,
        nextStepName: execution.stepName,
      });
      if (step?.kind === 'resumable') {
        await this.repository.insertExecution(uow, {
          workflowId: workflow.id,
          stepName: step.name,
          scheduledFor: new Date(),
          cursor: execution.cursor,
          continuesFromId: execution.id,
          signalId: execution.signalId,
        });
      }
      return null;
    }
    await this.repository.updateWorkflow(uow, workflow, { state: 'ready', currentStepName: null });
    if (!step) {
      await this.repository.updateWorkflow(uow, workflow, {
        state: 'paused',
        transitionedAt: new Date(),
        nextStepName: execution.stepName,
      });
      return new StepNotDefinedError(
        `Housekeeping recovered step execution ${execution.id}, but step '${execution.stepName}' is not defined in ${definition.target.name}; ` +
          'the workflow is paused. Use resumeAt() to continue at another step, or cancel() it.',
        { stepExecution: execution, workflow },
      );
    }
    if (step.kind === 'removed') {
      await this.repository.updateWorkflow(uow, workflow, { nextStepName: step.name });
      await this.scheduler.scheduleNextStep(uow, workflow, definition);
    } else if (step.kind === 'resumable') {
      await this.scheduler.createSuccessor(uow, workflow, definition, step, execution, 0);
    } else {
      await this.scheduler.createExecution(uow, workflow, definition, step, 0);
    }
    return null;
  }
}

function stillStuck(
  kind: StuckKind,
  workflow: WorkflowEntity,
  execution: StepExecutionEntity,
  cutoff: Date,
): boolean {
  if (execution.state !== kind) return false;
  if (kind === 'in_progress') return execution.startedAt !== null && execution.startedAt < cutoff;
  return execution.scheduledFor < cutoff && RUNNABLE_WORKFLOW_STATES.includes(workflow.state);
}
