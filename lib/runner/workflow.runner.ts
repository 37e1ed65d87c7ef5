import { Injectable, Logger } from '@nestjs/common';
import { isUuid } from '../common/uuid';
import { ReadinessWatcher } from '../discovery/readiness.watcher';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import { ErrorReportingService } from '../observability/error-reporting.service';
import { publishFinalize, publishStep, stepOutcome } from '../observability/diagnostics';
import { StepHistograms } from '../observability/step-histograms';
import { ClsContextBridge } from '../tracing/cls-context.bridge';
import { WorkflowTracer, type StepSpan } from '../tracing/workflow-tracer';
import {
  isTransientDatabaseError,
  retryTransientDatabaseErrors,
} from '../common/transient-database-error';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import type { StepJobData } from '../queue/step-job.interface';
import { ShutdownSignal } from '../resumable/shutdown.signal';
import { asError } from '../scheduling/execution-transitions';
import type { PreparedStep, RunOptions } from './prepared-step.interface';
import { StepChain, type JobSlot } from './step-chain';
import { StepContextImpl } from './step-context';
import { StepFinalizer, type ExceptionPhase, type FinalizeOutcome } from './step-finalizer';
import { StepInvoker } from './step-invoker';
import { PreconditionFailure, StepPreparer, type Preparation } from './step-preparer';
import { WaitTimeoutExpirer } from './wait-timeout.expirer';
import { WorkflowRepository, type StepReadAhead } from '../ports/workflow.repository';

const LOOKUP_ATTEMPTS = 5;
const LOOKUP_INTERVAL_MS = 100;
/** Waits before running a transaction again after a lost connection (about 4 s in all: a failover). */
const RETRY_DELAYS_MS = [100, 400, 1_000, 2_500] as const;
/** The runner's transactions: writes merged, round trips saved where the adapter can. */
const HOT_PATH = { hotPath: true } as const;

/**
 * Executes one step execution in three phases: prepare (under the workflow row lock), run (no lock
 * held), finalize (under the same locks). Called by the BullMQ processor; exported for advanced use.
 */
@Injectable()
export class WorkflowRunner {
  private readonly logger = new Logger('GenevaDrive');

  constructor(
    private readonly readiness: ReadinessWatcher,
    private readonly repository: WorkflowRepository,
    private readonly registry: WorkflowRegistry,
    private readonly preparer: StepPreparer,
    private readonly invoker: StepInvoker,
    private readonly finalizer: StepFinalizer,
    private readonly expirer: WaitTimeoutExpirer,
    private readonly errors: ErrorReportingService,
    private readonly shutdown: ShutdownSignal,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
    private readonly tracer: WorkflowTracer,
    private readonly cls: ClsContextBridge,
    private readonly histograms: StepHistograms,
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
   * Runs a step job for a BullMQ worker: `performStep`, plus the workflow's following steps in
   * process while they qualify for the worker's step chain (see `StepChain`).
   */
  performJob(data: StepJobData, slot: JobSlot): Promise<void> {
    const chain =
      this.options.stepChaining.maxSteps > 0
        ? new StepChain(slot, this.options.stepChaining, this.shutdown)
        : null;
    return this.runExecution(
      data.stepExecutionId,
      { interruptible: true, maxIterations: null },
      { workflowId: data.workflowId, readAhead: readAheadOf(data), chain },
    );
  }

  /**
   * Runs a wait-timeout job: fires the execution's signal-wait timeout if it is still waiting
   * past its deadline (see `WaitTimeoutExpirer`); harmless otherwise.
   */
  async expireWait(data: StepJobData): Promise<void> {
    await this.readiness.ready;
    const { stepExecutionId } = data;
    if (!isUuid(stepExecutionId)) return this.ignoreUnknown(stepExecutionId);
    const workflowId =
      data.workflowId && isUuid(data.workflowId)
        ? data.workflowId
        : (await this.repository.findExecution(stepExecutionId))?.workflowId;
    if (!workflowId) return this.ignoreUnknown(stepExecutionId);
    await this.expirer.expire(workflowId, stepExecutionId);
  }

  /**
   * `performStep` with run options (the test helpers run resumable steps non-interruptibly or
   * for a number of iterations). Internal.
   */
  async runExecution(
    stepExecutionId: string,
    runOptions: RunOptions,
    job: { workflowId?: string; readAhead?: StepReadAhead; chain: StepChain | null } = {
      chain: null,
    },
  ): Promise<void> {
    await this.readiness.ready;
    const preparation = await this.prepareWithLookup(
      stepExecutionId,
      job.workflowId,
      job.readAhead ?? {},
    );
    if (preparation.kind === 'failed') return this.settle(preparation.outcome);
    if (preparation.kind === 'missing') return this.ignoreUnknown(stepExecutionId);
    if (preparation.kind === 'stop') {
      if (preparation.raise) throw preparation.raise;
      return;
    }
    let prepared: PreparedStep | null = preparation.prepared;
    while (prepared) {
      const current: PreparedStep = prepared;
      const outcome = await this.tracer.inStepSpan(current, (span) =>
        this.runAttempt(current, runOptions, job.chain, span),
      );
      await this.settle(outcome);
      prepared = outcome.chained?.prepared ?? null;
    }
  }

  /** Run and finalize of one prepared attempt, in its span and the caller's CLS context. */
  private async runAttempt(
    current: PreparedStep,
    runOptions: RunOptions,
    chain: StepChain | null,
    span: StepSpan,
  ): Promise<FinalizeOutcome> {
    const run = await this.cls.run(current.workflow.context, () =>
      this.invoker.invoke(current, runOptions),
    );
    publishStep(current, run.result);
    // Safe to run again: finalize re-locks the rows and acts only on an execution in progress.
    const outcome = await retryTransientDatabaseErrors(
      () =>
        this.repository.transaction(async (uow) => {
          const finalized = await this.finalizer.finalize(uow, current, run, chain);
          // Out before the next step's job exists, so no worker's events for it come first.
          uow.afterCommit(() => {
            publishFinalize(current, finalized.states);
            finalized.chained?.events.forEach((publish) => publish());
          });
          return finalized;
        }, HOT_PATH),
      RETRY_DELAYS_MS,
    );
    this.histograms.stepFinalized(current, Date.now());
    if (this.tracer.enabled) {
      const { outcome: name, exception } = stepOutcome(run.result);
      span.end(name ?? 'completed', exception ?? null);
    }
    return outcome;
  }

  /**
   * The prepare transaction. The workflow id comes with the job, or is looked up; an unknown
   * execution is looked for again for up to 500 ms (a job may arrive before its row commits). A
   * prepare-phase exception is applied in a fresh transaction (`failed`); a lost connection is
   * thrown, so the job fails and the execution stays scheduled for reconciliation.
   */
  private async prepareWithLookup(
    stepExecutionId: string,
    jobWorkflowId: string | undefined,
    readAhead: StepReadAhead,
  ): Promise<Preparation | { kind: 'missing' } | { kind: 'failed'; outcome: FinalizeOutcome }> {
    if (!isUuid(stepExecutionId)) return { kind: 'missing' };
    let workflowId = jobWorkflowId && isUuid(jobWorkflowId) ? jobWorkflowId : undefined;
    for (let attempt = 1; attempt <= LOOKUP_ATTEMPTS; attempt++) {
      if (attempt > 1) await new Promise((resolve) => setTimeout(resolve, LOOKUP_INTERVAL_MS));
      workflowId ??= (await this.repository.findExecution(stepExecutionId))?.workflowId;
      if (!workflowId) continue;
      const lockedWorkflowId = workflowId;
      let preparation: Preparation | { kind: 'missing' };
      try {
        preparation = await retryTransientDatabaseErrors(
          () =>
            this.repository.transaction(
              (uow) => this.preparer.prepare(uow, lockedWorkflowId, stepExecutionId, readAhead),
              HOT_PATH,
            ),
          RETRY_DELAYS_MS,
        );
      } catch (thrown) {
        if (!(thrown instanceof PreconditionFailure) && isTransientDatabaseError(thrown))
          throw thrown;
        const phase: ExceptionPhase =
          thrown instanceof PreconditionFailure ? 'precondition' : 'prepare';
        const error = asError(thrown instanceof PreconditionFailure ? thrown.error : thrown);
        const outcome = await this.handlePrepareFailure(
          lockedWorkflowId,
          stepExecutionId,
          error,
          phase,
        );
        return { kind: 'failed', outcome };
      }
      if (preparation.kind !== 'missing') return preparation;
    }
    return { kind: 'missing' };
  }

  private ignoreUnknown(stepExecutionId: string): void {
    this.logger.warn(`Step execution ${stepExecutionId} not found; ignoring its job`);
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
    return this.repository.transaction(async (uow) => {
      const { workflow, execution } = await this.repository.lockForStep(
        uow,
        workflowId,
        executionId,
      );
      const definition = workflow && this.registry.findByName(workflow.type);
      if (!workflow || !execution || !definition || execution.state !== 'scheduled') {
        return { raise: error, report: null };
      }
      const logger = this.preparer.loggerFor(workflow, execution);
      const rows = this.finalizer.rowsFor(workflow, execution, definition, logger);
      const ctx = new StepContextImpl<unknown>(
        workflow,
        null,
        execution,
        null,
        logger,
        rows.step?.kind === 'resumable',
      );
      return this.finalizer.applyException(uow, rows, error, phase, ctx);
    }, HOT_PATH);
  }
}

/** The job's hints of what its prepare reads, those that are plausible (job data is input). */
function readAheadOf(data: StepJobData): StepReadAhead {
  const { heroType, heroId, signalId } = data;
  const plausible = (value: unknown): value is string =>
    typeof value === 'string' && value !== '' && value.length <= 255;
  return {
    hero: plausible(heroType) && plausible(heroId) ? { heroType, heroId } : null,
    signalId: typeof signalId === 'string' && isUuid(signalId) ? signalId : null,
  };
}
