import { Injectable } from '@nestjs/common';
import { retryTransientDatabaseErrors } from '../common/transient-database-error';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import { SignalWaitTimeoutError } from '../errors/signal-wait-timeout.error';
import { ErrorReportingService } from '../observability/error-reporting.service';
import { publishFinalize, publishWaitTimeout } from '../observability/diagnostics';
import { WorkflowRepository } from '../ports/workflow.repository';
import { WorkflowScheduler } from '../scheduling/workflow-scheduler';
import { StepContextImpl } from './step-context';
import { StepFinalizer, type FinalizeOutcome } from './step-finalizer';
import { signalNameOf, StepPreparer } from './step-preparer';

/** The waits before the timeout's transaction runs again after a transient database error. */
const RETRY_DELAYS_MS = [100, 400, 1_000, 2_500] as const;

/** What `expire()` did. */
export type WaitExpiry =
  /** The timeout fired: the step's `onTimeout` (or exception policy) was applied. */
  | { kind: 'fired'; execution: StepExecutionEntity }
  /** The deadline is still ahead (a timer that ran early): armed again for the rest. */
  | { kind: 'notDue'; execution: StepExecutionEntity }
  /**
   * Nothing to do: the execution is gone, no longer waiting (a signal woke it), has no deadline,
   * or its workflow is not ready (paused: `resume()` arms the timer again).
   */
  | { kind: 'ignored'; execution: StepExecutionEntity | null };

/**
 * Fires a parked execution's signal-wait timeout (SPEC §16.3): under the workflow row lock, and
 * only while the execution is still `waiting` past its `wait_deadline_at` in a `ready` workflow,
 * the engine acts as if the step had thrown `SignalWaitTimeoutError`, without running its body.
 * A signal delivered meanwhile holds the same lock, so exactly one of the two wins. Called by
 * the timeout's delayed job, the housekeeping sweep, and `WorkflowTestHelper.expireWait`.
 */
@Injectable()
export class WaitTimeoutExpirer {
  constructor(
    private readonly repository: WorkflowRepository,
    private readonly registry: WorkflowRegistry,
    private readonly scheduler: WorkflowScheduler,
    private readonly preparer: StepPreparer,
    private readonly finalizer: StepFinalizer,
    private readonly errors: ErrorReportingService,
  ) {}

  /** `force` fires before the deadline (the test helper). */
  async expire(
    workflowId: string,
    executionId: string,
    options: { force?: boolean } = {},
  ): Promise<WaitExpiry> {
    // Fenced by the rows' state under their locks, so safe to run again after any transient
    // error, a connection lost at COMMIT included (a second run finds the timeout fired).
    const { expiry, outcome } = await retryTransientDatabaseErrors(
      () => this.fire(workflowId, executionId, options),
      RETRY_DELAYS_MS,
    );
    if (outcome?.report) await this.errors.report(outcome.report.error, outcome.report.context);
    return expiry;
  }

  private fire(
    workflowId: string,
    executionId: string,
    options: { force?: boolean },
  ): Promise<{ expiry: WaitExpiry; outcome: FinalizeOutcome | null }> {
    return this.repository.transaction(async (uow) => {
      const { workflow, execution } = await this.repository.lockForStep(
        uow,
        workflowId,
        executionId,
      );
      const ignored = { expiry: { kind: 'ignored' as const, execution }, outcome: null };
      if (!workflow || !execution || execution.workflowId !== workflow.id) return ignored;
      const deadline = execution.waitDeadlineAt;
      if (execution.state !== 'waiting' || !deadline || workflow.state !== 'ready') return ignored;
      const definition = this.registry.findByName(workflow.type);
      const step = definition?.steps.named(execution.stepName);
      // An unknown class or step is the step job's to report, when the workflow runs on; a step
      // whose timeout was removed from the code since it parked waits unbounded.
      if (!definition || !step || step.kind === 'removed' || step.timeoutMs === null)
        return ignored;
      if (!options.force && deadline.getTime() > Date.now()) {
        await this.scheduler.armWaitTimeout(uow, workflow, definition, execution);
        return { expiry: { kind: 'notDue' as const, execution }, outcome: null };
      }
      const error = new SignalWaitTimeoutError(
        step.name,
        signalNameOf(step),
        execution.waitingSince ?? deadline,
        deadline,
      );
      const logger = this.preparer.loggerFor(workflow, execution);
      const hero =
        workflow.heroType && workflow.heroId
          ? await this.repository.loadHero(uow, workflow.heroType, workflow.heroId)
          : null;
      const ctx = new StepContextImpl<unknown>(
        workflow,
        hero,
        execution,
        null,
        logger,
        step.kind === 'resumable',
      );
      const rows = this.finalizer.rowsFor(workflow, execution, definition, logger);
      const applied: FinalizeOutcome = await this.finalizer.applyException(
        uow,
        rows,
        error,
        'timeout',
        ctx,
        step.onTimeout ?? undefined,
      );
      if (workflow.currentStepName !== null)
        await this.repository.updateWorkflow(uow, workflow, { currentStepName: null });
      uow.afterCommit(() => {
        const states = { workflowState: workflow.state, stepState: execution.state };
        publishWaitTimeout({ workflow, execution, step }, states);
        publishFinalize({ workflow, execution, step }, states);
      });
      return { expiry: { kind: 'fired' as const, execution }, outcome: applied };
    });
  }
}
