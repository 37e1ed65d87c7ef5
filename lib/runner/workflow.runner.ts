import { Injectable, Logger } from '@nestjs/common';
import { isUuid } from '../common/uuid';
import { ReadinessWatcher } from '../discovery/readiness.watcher';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import { ErrorReportingService } from '../observability/error-reporting.service';
import { publishFinalize, publishStep } from '../observability/diagnostics';
import { GenevaDriveDataSource } from '../persistence/geneva-drive-data-source';
import { WorkflowStore } from '../persistence/workflow.store';
import { asError } from './execution-transitions';
import type { RunOptions } from './prepared-step.interface';
import { StepContextImpl } from './step-context';
import { StepFinalizer, type ExceptionPhase, type FinalizeOutcome } from './step-finalizer';
import { StepInvoker } from './step-invoker';
import { PreconditionFailure, StepPreparer } from './step-preparer';

const LOOKUP_ATTEMPTS = 5;
const LOOKUP_INTERVAL_MS = 100;

/**
 * Executes one step execution in three phases: prepare (under the workflow row lock), run (no lock
 * held), finalize (under the same locks). Called by the BullMQ processor; exported for advanced use.
 */
@Injectable()
export class WorkflowRunner {
  private readonly logger = new Logger('GenevaDrive');

  constructor(
    private readonly readiness: ReadinessWatcher,
    private readonly database: GenevaDriveDataSource,
    private readonly store: WorkflowStore,
    private readonly registry: WorkflowRegistry,
    private readonly preparer: StepPreparer,
    private readonly invoker: StepInvoker,
    private readonly finalizer: StepFinalizer,
    private readonly errors: ErrorReportingService,
  ) {}

  /**
   * Runs the execution. Harmless for a duplicate delivery or an execution no longer scheduled; an
   * unknown id is retried for up to 500 ms (a job may arrive before its row commits). Rejects with
   * the step's exception after the state change has committed.
   */
  performStep(stepExecutionId: string): Promise<void> {
    return this.runExecution(stepExecutionId, { interruptible: true, maxIterations: null });
  }

  /**
   * `performStep` with run options (the test helpers run resumable steps non-interruptibly or
   * for a number of iterations). Internal.
   */
  async runExecution(stepExecutionId: string, runOptions: RunOptions): Promise<void> {
    await this.readiness.ready;
    const found = await this.findWithRetry(stepExecutionId);
    if (!found) {
      this.logger.warn(`Step execution ${stepExecutionId} not found; ignoring its job`);
      return;
    }
    let preparation;
    try {
      preparation = await this.database.transaction((uow) =>
        this.preparer.prepare(uow, found.workflowId, stepExecutionId),
      );
    } catch (thrown) {
      const phase: ExceptionPhase = thrown instanceof PreconditionFailure ? 'precondition' : 'prepare';
      const error = asError(thrown instanceof PreconditionFailure ? thrown.error : thrown);
      return this.settle(await this.handlePrepareFailure(found.workflowId, stepExecutionId, error, phase));
    }
    if (preparation.kind === 'stop') {
      if (preparation.raise) throw preparation.raise;
      return;
    }
    const run = await this.invoker.invoke(preparation.prepared, runOptions);
    publishStep(preparation.prepared, run.result);
    const outcome = await this.database.transaction((uow) =>
      this.finalizer.finalize(uow, preparation.prepared, run),
    );
    publishFinalize(preparation.prepared, outcome.states);
    return this.settle(outcome);
  }

  /** Reports (after commit) and re-raises the step's exception. */
  private async settle(outcome: FinalizeOutcome): Promise<void> {
    if (outcome.report) await this.errors.report(outcome.report.error, outcome.report.context);
    if (outcome.raise) throw outcome.raise;
  }

  /** A failed prepare rolled back; its exception is applied in a fresh transaction. */
  private handlePrepareFailure(
    workflowId: string,
    executionId: string,
    error: Error,
    phase: ExceptionPhase,
  ): Promise<FinalizeOutcome> {
    return this.database.transaction(async (uow) => {
      const workflow = await this.store.lockWorkflow(uow, workflowId);
      const execution = await this.store.lockExecution(uow, executionId);
      const definition = workflow && this.registry.findByName(workflow.type);
      if (!workflow || !execution || !definition || execution.state !== 'scheduled') {
        return { raise: error, report: null };
      }
      const logger = this.preparer.loggerFor(workflow, execution);
      const rows = this.finalizer.rowsFor(workflow, execution, definition, logger);
      const ctx = new StepContextImpl<unknown>(workflow, null, execution, null, logger, rows.step?.kind === 'resumable');
      return this.finalizer.applyException(uow, rows, error, phase, ctx);
    });
  }

  private async findWithRetry(id: string) {
    if (!isUuid(id)) return null;
    for (let attempt = 1; ; attempt++) {
      const execution = await this.store.findExecution(this.database.manager, id);
      if (execution || attempt >= LOOKUP_ATTEMPTS) return execution;
      await new Promise((resolve) => setTimeout(resolve, LOOKUP_INTERVAL_MS));
    }
  }
}
