import { Injectable } from '@nestjs/common';
import { parseDuration } from '../common/duration';
import type { StepDefinition } from '../discovery/step-definition.interface';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import type { ErrorReportContext } from '../interfaces/module-options.interface';
import type { StepExecutionState, WorkflowState } from '../interfaces/states.interface';
import type { TaggedLogger } from '../observability/tagged-logger';
import { isTransientDatabaseError } from '../common/transient-database-error';
import type { ExceptionPolicy } from '../api/exception-policy';
import {
  consecutiveReattemptsPaged,
  decide,
  selectPolicy,
  type ExceptionDecision,
} from './exception-decision';
import {
  errorColumns,
  exceptionInfo,
  terminalTransition,
} from '../scheduling/execution-transitions';
import type { FlowControlRequest } from './flow-control';
import type { PreparedStep, StepRun } from './prepared-step.interface';
import type { StepContextImpl } from './step-context';
import { SignalRendezvous } from '../signals/signal-rendezvous';
import type { StepChain } from './step-chain';
import { StepPreparer, type Preparation } from './step-preparer';
import { WorkflowScheduler } from '../scheduling/workflow-scheduler';
import { WorkflowRepository, type RepositoryTransaction } from '../ports/workflow.repository';

/**
 * Where an exception came from: the step body, a precondition, the rest of prepare, or a signal
 * wait's timeout (handled like a body exception; the body never ran).
 */
export type ExceptionPhase = 'body' | 'precondition' | 'prepare' | 'timeout';

const REATTEMPT_REASONS: Record<Exclude<ExceptionPhase, 'prepare'>, string> = {
  body: 'exception_policy',
  precondition: 'precondition',
  timeout: 'wait_timeout',
};

/** What the runner does after the finalize transaction commits. */
export interface FinalizeOutcome {
  /** Re-raised to the job so BullMQ records the failure (after the state change committed). */
  raise: Error | null;
  /** Passed to `errorReporter`. */
  report: { error: Error; context: ErrorReportContext } | null;
  /** Set by `finalize()`: the states it left (for the `geneva-drive:finalize` diagnostics event). */
  states?: { workflowState: WorkflowState; stepState: StepExecutionState };
  /** The next step, when the worker's step chain took it: started in this transaction, run next. */
  chained?: ChainedStart;
}

/** A step the finalize transaction started for the worker to run in process. */
export interface ChainedStart {
  /** Null when its prepare stopped it (skipped, canceled, paused): nothing to run. */
  prepared: PreparedStep | null;
  /** Its diagnostics events, published once the previous step's finalize event is out. */
  events: Array<() => void>;
}

/** The state of the locked rows a transition works on. */
interface Rows {
  workflow: WorkflowEntity;
  execution: StepExecutionEntity;
  definition: WorkflowDefinition;
  step: StepDefinition | undefined;
  logger: TaggedLogger;
  /** True when an operator paused the workflow mid-step: record the outcome, schedule nothing. */
  deferred: boolean;
  /** The worker's step chain; null where the next step must be enqueued. */
  chain: StepChain | null;
  /** Set when the chain took the next step. */
  chained?: ChainedStart;
}

/**
 * Phase 3 (and prepare-phase failures): applies a step's result to the execution and the workflow
 * under the workflow and execution row locks, and schedules what comes next.
 */
@Injectable()
export class StepFinalizer {
  constructor(
    private readonly repository: WorkflowRepository,
    private readonly scheduler: WorkflowScheduler,
    private readonly rendezvous: SignalRendezvous,
    private readonly preparer: StepPreparer,
  ) {}

  async finalize(
    uow: RepositoryTransaction,
    prepared: PreparedStep,
    run: StepRun,
    chain: StepChain | null = null,
  ): Promise<FinalizeOutcome> {
    const none: FinalizeOutcome = { raise: null, report: null };
    // A completed step with a step after it may chain: that step's prepare, in this transaction,
    // loads the same hero, which the lock's round trip can carry.
    const { heroType, heroId } = prepared.workflow;
    const next = prepared.definition.steps.nextAfter(prepared.execution.stepName);
    const mayChain = chain !== null && run.result.kind === 'completed' && next !== null;
    const heroReadAhead = mayChain && heroType && heroId ? { heroType, heroId } : null;
    // A step chain's usual finalize decides nothing that the locked rows could change as long as
    // they are as this process left them: it need not wait for their read (see lockForStepAsLeft).
    const guessed =
      mayChain && decidedWithoutReading(prepared, next)
        ? this.repository.lockForStepAsLeft(uow, prepared, { hero: heroReadAhead })
        : null;
    const { workflow, execution } =
      guessed ??
      (await this.repository.lockForStep(uow, prepared.workflow.id, prepared.execution.id, {
        hero: heroReadAhead,
        // The signal the execution is pinned to, which its settle (below) reads.
        signalId: prepared.execution.signalId,
      }));
    if (!workflow || !execution || execution.state !== 'in_progress') {
      prepared.logger.warn(
        `Execution is no longer in progress (${execution?.state ?? 'deleted'}); not finalizing`,
      );
      return workflow && execution
        ? { ...none, states: { workflowState: workflow.state, stepState: execution.state } }
        : none;
    }
    const userMetadata = run.ctx.userMetadataValues;
    if (Object.keys(userMetadata).length > 0) {
      execution.metadata = { ...(execution.metadata ?? {}), user: userMetadata };
    }
    // A step whose exception is re-raised to its job hands nothing on in process.
    const chainable = run.result.kind === 'error' ? null : chain;
    const rows: Rows = {
      ...prepared,
      workflow,
      execution,
      deferred: workflow.state === 'paused',
      chain: chainable,
    };

    if (workflow.state !== 'performing' && workflow.state !== 'paused') {
      await this.setExecution(uow, rows, terminalTransition('canceled', 'canceled'));
      await this.repository.updateWorkflow(uow, workflow, { currentStepName: null });
      return { ...none, states: { workflowState: workflow.state, stepState: execution.state } };
    }
    const { result } = run;
    let outcome = none;
    if (result.kind === 'completed') {
      await this.setExecution(uow, rows, terminalTransition('completed', 'success'));
      await this.settleSignal(uow, rows, false);
      await this.continueWithNextStep(uow, rows);
    } else if (result.kind === 'flow') {
      if (result.swallowedError) {
        rows.logger.warn(
          `Exception after a flow-control request was swallowed (not reported): ${result.swallowedError.message}`,
        );
      }
      await this.applyFlowControl(uow, rows, result.request);
    } else if (result.kind === 'interrupted') {
      await this.applyInterruption(uow, rows, result.waitMs);
    } else {
      outcome = await this.applyException(uow, rows, result.error, 'body', run.ctx);
    }
    const chainedStep = rows.chained?.prepared;
    // The next step's body gets the hero read under this transaction's locks.
    if (guessed && chainedStep)
      uow.afterCommit(() => (chainedStep.hero = guessed.heroAfterCommit()));
    if (rows.chained?.prepared) {
      return {
        ...outcome,
        states: { workflowState: 'ready', stepState: execution.state },
        chained: rows.chained,
      };
    }
    if (workflow.currentStepName !== null)
      await this.repository.updateWorkflow(uow, workflow, { currentStepName: null });
    return {
      ...outcome,
      states: { workflowState: workflow.state, stepState: execution.state },
      chained: rows.chained,
    };
  }

  /**
   * Applies the exception policy (`policy` when given, else the one selected for the error) to an
   * exception of the given phase. Body, precondition and timeout exceptions set the execution's
   * outcome from the action; other prepare exceptions leave it `failed/failed` and only the
   * workflow follows the action.
   */
  async applyException(
    uow: RepositoryTransaction,
    rows: Rows,
    error: Error,
    phase: ExceptionPhase,
    ctx: StepContextImpl<unknown>,
    policy: ExceptionPolicy = selectPolicy(error, rows.definition, rows.step),
  ): Promise<FinalizeOutcome> {
    const { definition, execution, workflow } = rows;
    const prior = await consecutiveReattemptsPaged(execution, (offset, limit) =>
      this.repository.executionsOfStep(uow, workflow.id, execution.stepName, { offset, limit }),
    );
    let decision: ExceptionDecision;
    try {
      decision = await decide(policy, error, prior, definition.instance, ctx);
    } catch (handlerError) {
      rows.logger.error(`Exception handler threw: ${String(handlerError)}; pausing`);
      decision = { action: 'pause', waitMs: null, report: true };
    }
    rows.logger.log(
      `Step raised ${error.name}: ${error.message}; exception policy decides ${decision.action}`,
    );
    const info = { exception: exceptionInfo(error) };

    if (phase === 'prepare') {
      // The row stays failed/failed; the reason makes a reattempt count toward maxReattempts.
      const reason = decision.action === 'reattempt' ? { reattemptReason: 'exception_policy' } : {};
      await this.setExecution(
        uow,
        rows,
        { ...terminalTransition('failed', 'failed'), ...errorColumns(error) },
        {
          ...info,
          ...reason,
        },
      );
      await this.applyDecisionToWorkflow(uow, rows, decision);
    } else if (decision.action === 'reattempt') {
      await this.setExecution(uow, rows, terminalTransition('completed', 'reattempted'), {
        ...info,
        reattemptReason: REATTEMPT_REASONS[phase],
      });
      await this.continueWithSameStep(uow, rows, decision.waitMs);
    } else if (decision.action === 'cancel') {
      await this.setExecution(
        uow,
        rows,
        { ...terminalTransition('failed', 'canceled'), ...errorColumns(error) },
        info,
      );
      await this.repository.updateWorkflow(uow, workflow, {
        state: 'canceled',
        transitionedAt: new Date(),
      });
    } else if (decision.action === 'skip') {
      await this.setExecution(uow, rows, terminalTransition('skipped', 'skipped'), info);
      await this.settleSignal(uow, rows, true);
      await this.continueWithNextStep(uow, rows);
    } else if (decision.action === 'finish') {
      await this.setExecution(uow, rows, terminalTransition('completed', 'success'), info);
      await this.settleSignal(uow, rows, false);
      await this.finishWorkflow(uow, rows);
    } else {
      await this.setExecution(
        uow,
        rows,
        { ...terminalTransition('failed', 'failed'), ...errorColumns(error) },
        info,
      );
      await this.pauseWorkflow(uow, rows);
    }
    return {
      raise: error,
      report: decision.report ? { error, context: reportContext(workflow, execution) } : null,
    };
  }

  /** Rows for a prepare-phase failure, handled in a fresh transaction after the first rolled back. */
  rowsFor(
    workflow: WorkflowEntity,
    execution: StepExecutionEntity,
    definition: WorkflowDefinition,
    logger: TaggedLogger,
  ): Rows {
    return {
      workflow,
      execution,
      definition,
      step: definition.steps.named(execution.stepName),
      logger,
      deferred: false,
      chain: null,
    };
  }

  private async applyFlowControl(
    uow: RepositoryTransaction,
    rows: Rows,
    request: FlowControlRequest,
  ): Promise<void> {
    const { workflow } = rows;
    switch (request.action) {
      case 'cancel':
        await this.setExecution(uow, rows, terminalTransition('canceled', 'canceled'));
        await this.repository.updateWorkflow(uow, workflow, {
          state: 'canceled',
          transitionedAt: new Date(),
        });
        return;
      case 'pause':
        if (rows.step?.kind === 'resumable') {
          // The cursor stays; resume() continues the chain from it.
          await this.setExecution(uow, rows, terminalTransition('completed', 'workflow_paused'));
        } else {
          await this.setExecution(uow, rows, terminalTransition('canceled', 'canceled'));
        }
        await this.repository.updateWorkflow(uow, workflow, {
          nextStepName: rows.execution.stepName,
        });
        await this.pauseWorkflow(uow, rows);
        return;
      case 'skip':
        await this.setExecution(uow, rows, terminalTransition('skipped', 'skipped'));
        await this.settleSignal(uow, rows, true);
        await this.continueWithNextStep(uow, rows);
        return;
      case 'finish':
        await this.setExecution(uow, rows, terminalTransition('completed', 'success'));
        await this.settleSignal(uow, rows, false);
        await this.finishWorkflow(uow, rows);
        return;
      case 'reattempt':
      case 'suspend': {
        const waitMs =
          request.wait === undefined ? null : parseDuration(request.wait, `${request.action} wait`);
        const outcome = request.action === 'reattempt' ? 'reattempted' : 'continued';
        const rewind =
          request.action === 'reattempt' && request.rewind && rows.step?.kind === 'resumable';
        await this.setExecution(
          uow,
          rows,
          { ...terminalTransition('completed', outcome), ...(rewind ? { cursor: null } : {}) },
          { reattemptReason: 'flow_control' },
        );
        await this.continueWithSameStep(uow, rows, waitMs, rewind);
        return;
      }
    }
  }

  private async applyDecisionToWorkflow(
    uow: RepositoryTransaction,
    rows: Rows,
    decision: ExceptionDecision,
  ): Promise<void> {
    if (decision.action === 'reattempt')
      return this.continueWithSameStep(uow, rows, decision.waitMs);
    if (decision.action === 'skip') return this.continueWithNextStep(uow, rows);
    if (decision.action === 'finish') return this.finishWorkflow(uow, rows);
    if (decision.action === 'cancel') {
      await this.repository.updateWorkflow(uow, rows.workflow, {
        state: 'canceled',
        transitionedAt: new Date(),
      });
      return;
    }
    return this.pauseWorkflow(uow, rows);
  }

  /** Schedules the following step, or, when an operator paused mid-step, only points at it. */
  private async continueWithNextStep(uow: RepositoryTransaction, rows: Rows): Promise<void> {
    const { workflow, definition, execution } = rows;
    if (rows.deferred) {
      const next = definition.steps.nextAfter(execution.stepName);
      await this.repository.updateWorkflow(uow, workflow, {
        currentStepName: null,
        nextStepName: next?.name ?? null,
      });
      return;
    }
    await this.repository.updateWorkflow(uow, workflow, {
      state: 'ready',
      currentStepName: null,
      nextStepName: execution.stepName,
    });
    const scheduled = await this.scheduler.scheduleNextStep(uow, workflow, definition, rows.chain);
    if (scheduled?.inProcess)
      rows.chained = await this.startInProcess(uow, rows, scheduled.execution);
  }

  /**
   * Runs the prepare phase of the next step inside this transaction, for the worker to run it
   * right after the commit. A precondition that throws wrote nothing yet: the step is enqueued
   * instead, and its job's own prepare deals with the exception.
   */
  private async startInProcess(
    uow: RepositoryTransaction,
    rows: Rows,
    next: StepExecutionEntity,
  ): Promise<ChainedStart | undefined> {
    const events: Array<() => void> = [];
    let preparation: Preparation;
    try {
      preparation = await this.preparer.prepareLocked(uow, rows.workflow, next, events);
    } catch (error) {
      // A failed query left the transaction unusable; only user code's exceptions fall back.
      if (this.repository.isDatabaseError(error) || isTransientDatabaseError(error)) throw error;
      const step = rows.definition.steps.named(next.stepName)!;
      await this.scheduler.enqueueNew(uow, rows.workflow, rows.definition, step, next);
      return undefined;
    }
    if (preparation.kind === 'run') return { prepared: preparation.prepared, events };
    if (preparation.raise)
      rows.logger.warn(`Next step '${next.stepName}' stopped: ${preparation.raise.message}`);
    return { prepared: null, events };
  }

  /**
   * A resumable step interrupted at a checkpoint: `completed/continued` and a successor carrying
   * the cursor; `completed/workflow_paused` when an operator paused the workflow meanwhile.
   */
  private async applyInterruption(
    uow: RepositoryTransaction,
    rows: Rows,
    waitMs: number | null,
  ): Promise<void> {
    if (rows.deferred) {
      await this.setExecution(uow, rows, terminalTransition('completed', 'workflow_paused'));
      await this.repository.updateWorkflow(uow, rows.workflow, {
        nextStepName: rows.execution.stepName,
      });
      return;
    }
    await this.setExecution(uow, rows, terminalTransition('completed', 'continued'));
    await this.continueWithSameStep(uow, rows, waitMs);
  }

  /**
   * Schedules the same step again after `waitMs`; for a resumable step, a successor that keeps
   * the cursor (cleared when `rewind`).
   */
  private async continueWithSameStep(
    uow: RepositoryTransaction,
    rows: Rows,
    waitMs: number | null,
    rewind = false,
  ): Promise<void> {
    const { workflow, definition, execution, step } = rows;
    if (rows.deferred || !step) {
      await this.repository.updateWorkflow(uow, workflow, {
        currentStepName: null,
        nextStepName: execution.stepName,
      });
      if (!step) await this.pauseWorkflow(uow, rows);
      return;
    }
    await this.repository.updateWorkflow(uow, workflow, { state: 'ready', currentStepName: null });
    // The attempt number (the step span's `geneva_drive.attempt`): a reattempt counts one up, a
    // resumable step's suspension continues the same attempt.
    const previous =
      typeof execution.metadata?.attempt === 'number' ? execution.metadata.attempt : 1;
    const attempt = execution.outcome === 'reattempted' ? previous + 1 : previous;
    const metadata = attempt > 1 ? { attempt } : undefined;
    if (step.kind === 'resumable') {
      await this.scheduler.createSuccessor(uow, workflow, definition, step, execution, waitMs, {
        rewind,
        metadata,
      });
    } else {
      await this.scheduler.createExecution(uow, workflow, definition, step, waitMs, { metadata });
    }
  }

  /** A clean outcome resolves the attached signal; a skip resolves its step by decree. */
  private async settleSignal(
    uow: RepositoryTransaction,
    rows: Rows,
    skipped: boolean,
  ): Promise<void> {
    const { execution } = rows;
    await this.rendezvous.settle(uow, execution.signalId, skipped ? [execution.stepName] : []);
  }

  private async finishWorkflow(uow: RepositoryTransaction, rows: Rows): Promise<void> {
    await this.scheduler.finishWorkflow(uow, rows.workflow);
  }

  private async pauseWorkflow(uow: RepositoryTransaction, rows: Rows): Promise<void> {
    if (rows.workflow.state === 'paused') return;
    await this.repository.updateWorkflow(uow, rows.workflow, {
      state: 'paused',
      transitionedAt: new Date(),
    });
  }

  private async setExecution(
    uow: RepositoryTransaction,
    rows: Rows,
    changes: Partial<StepExecutionEntity>,
    metadata: Record<string, unknown> = {},
  ): Promise<void> {
    const merged = { ...(rows.execution.metadata ?? {}), ...metadata };
    await this.repository.updateExecution(uow, rows.execution, {
      ...changes,
      metadata: Object.keys(merged).length > 0 ? merged : null,
    });
  }
}

/**
 * Whether a completed step's finalize, when its rows are as the step left them, decides the same
 * whatever else it could read: no signal to settle, and a next step whose prepare runs no code of
 * the app before its body (no `@CancelIf`, no `skipIf` function, no gate) and finds the hero that
 * the previous step had, if the workflow has one. Not after a resumable step: its checkpoints
 * write its row outside the step's transactions, so the guess would break every time.
 */
function decidedWithoutReading(prepared: PreparedStep, next: StepDefinition | null): boolean {
  const { workflow, execution, definition, hero, step } = prepared;
  return (
    step.kind === 'step' &&
    next !== null &&
    next.kind === 'step' &&
    next.waitFor === null &&
    (next.skipIf === null || next.skipIf === false) &&
    definition.cancelIfMethods.length === 0 &&
    !execution.signalId &&
    workflow.state === 'performing' &&
    execution.state === 'in_progress' &&
    (hero !== null || !workflow.heroType || !workflow.heroId)
  );
}

/** The `errorReporter` context of an execution. */
export function reportContext(
  workflow: WorkflowEntity,
  execution: StepExecutionEntity | null,
): ErrorReportContext {
  return {
    workflowId: workflow.id,
    workflowClass: workflow.type,
    stepExecutionId: execution?.id ?? null,
    stepName: execution?.stepName ?? null,
    heroType: workflow.heroType,
    heroId: workflow.heroId,
  };
}
