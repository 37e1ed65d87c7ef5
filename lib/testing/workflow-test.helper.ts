import { workflowIdOf, workflowNotFound } from '../common/workflow-like';
import { isDeepStrictEqual, inspect } from 'node:util';
import { Injectable } from '@nestjs/common';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { InvalidStateError } from '../errors/invalid-state.error';
import { StepNotDefinedError } from '../errors/step-not-defined.error';
import type { SignalMatcherLike } from '../interfaces/signal-matcher.interface';
import type {
  SignalState,
  StepExecutionState,
  WorkflowState,
} from '../interfaces/states.interface';
import type { WorkflowLike } from '../interfaces/workflow-service.interface';
import { WorkflowRepository } from '../ports/workflow.repository';
import { WorkflowRunner } from '../runner/workflow.runner';
import { WaitTimeoutExpirer } from '../runner/wait-timeout.expirer';
import { WorkflowScheduler } from '../scheduling/workflow-scheduler';
import { WorkflowService } from '../service/workflow.service';
import type { EnqueuedJob } from './enqueued-job.interface';
import { InMemoryStepJobQueue } from './in-memory-step-job.queue';

const STOPPED: readonly WorkflowState[] = ['finished', 'canceled', 'paused'];

/**
 * How a helper runs an execution: resumable steps run to the end when not interruptible, or stop
 * after `maxIterations` checkpoints; plain steps run the same either way.
 */
interface RunMode {
  interruptible: boolean;
  maxIterations?: number;
}

/**
 * Drives workflows step by step in tests and asserts on their state, the port of the gem's
 * `GenevaDrive::TestHelpers`. Provided by `GenevaDriveTestingModule`: get it with
 * `app.get(WorkflowTestHelper)`. Steps run in the calling test, ignoring `scheduled_for`, and
 * their exceptions propagate (after the workflow's state change has been committed).
 */
@Injectable()
export class WorkflowTestHelper {
  constructor(
    private readonly service: WorkflowService,
    private readonly runner: WorkflowRunner,
    private readonly expirer: WaitTimeoutExpirer,
    private readonly registry: WorkflowRegistry,
    private readonly repository: WorkflowRepository,
    private readonly scheduler: WorkflowScheduler,
    private readonly queue: InMemoryStepJobQueue,
  ) {}

  /**
   * Runs the workflow's executions one after the other until it is finished, canceled or paused,
   * or has no current execution; resolves to the reloaded workflow. Throws an `Error` containing
   * "parked" and the awaited signal on a parked (`waiting`) execution, and one mentioning
   * `maxSteps` once `maxSteps` (default 100) executions ran without the workflow stopping.
   * A step's exception propagates.
   */
  async speedrunWorkflow(
    workflow: WorkflowLike,
    opts: { maxSteps?: number } = {},
  ): Promise<WorkflowEntity> {
    const maxSteps = positiveInteger(opts.maxSteps ?? 100, 'speedrunWorkflow', 'maxSteps');
    const id = workflowIdOf(workflow);
    for (let executed = 0; ; executed++) {
      const row = await this.load(id);
      if (STOPPED.includes(row.state)) return row;
      const current = await this.runnableCurrent(row, 'speedrunWorkflow');
      if (!current) return row;
      if (executed >= maxSteps) {
        throw new Error(
          `speedrunWorkflow exceeded maxSteps (${maxSteps}) on ${row.type} ${row.id}: step '${current.stepName}' ` +
            'is still scheduled. The workflow may be in an infinite loop (a step that reattempts forever?); ' +
            'raise maxSteps if it really needs more executions.',
        );
      }
      await this.perform(current.id, { interruptible: false });
    }
  }

  /**
   * Runs the current execution once (interruptibly) and resolves to it reloaded; null when the
   * workflow has no current execution. Throws an `Error` containing "parked" on a parked one.
   */
  async performNextStep(workflow: WorkflowLike): Promise<StepExecutionEntity | null> {
    const row = await this.load(workflowIdOf(workflow));
    const current = await this.runnableCurrent(row, 'performNextStep');
    if (!current) return null;
    await this.perform(current.id, { interruptible: true });
    return this.reloadExecution(current.id);
  }

  /**
   * Runs `stepName` (default: the workflow's `nextStepName`) in a fresh execution: cancels the
   * scheduled (and parked) executions, creates a new scheduled one for the step and runs it.
   * Resolves to that execution reloaded. An unknown step throws `StepNotDefinedError` listing
   * the available steps.
   */
  async performStepInline(workflow: WorkflowLike, stepName?: string): Promise<StepExecutionEntity> {
    const row = await this.load(workflowIdOf(workflow));
    const definition = this.registry.resolve(row.type);
    const name = stepName ?? row.nextStepName;
    const step = name === null ? undefined : definition.steps.named(name);
    if (!step || step.kind === 'removed') {
      const what =
        name === null
          ? `${row.type} ${row.id} has no next step and no step name was given`
          : `Step '${name}' is not defined in ${definition.target.name}`;
      throw new StepNotDefinedError(`${what}. Available steps: ${availableSteps(definition)}.`);
    }
    const created = await this.repository.transaction(async (uow) => {
      const locked = await this.repository.lockWorkflow(uow, row.id);
      if (!locked) throw workflowNotFound(row.id);
      return this.scheduler.createExecution(uow, locked, definition, step, null);
    });
    await this.perform(created.id, { interruptible: false });
    return this.reloadExecution(created.id);
  }

  /**
   * Runs the current execution non-interruptibly and follows its successor chain (executions
   * whose `continuesFromId` is the one just run) until it ends; resolves to the last execution
   * run, reloaded, or null when there is no current execution. The next step stays scheduled.
   * Throws an `Error` mentioning `maxExecutions` (default 100) when the chain is longer.
   */
  async speedrunCurrentStep(
    workflow: WorkflowLike,
    opts: { maxExecutions?: number } = {},
  ): Promise<StepExecutionEntity | null> {
    const maxExecutions = positiveInteger(
      opts.maxExecutions ?? 100,
      'speedrunCurrentStep',
      'maxExecutions',
    );
    const row = await this.load(workflowIdOf(workflow));
    const current = await this.runnableCurrent(row, 'speedrunCurrentStep');
    if (!current) return null;
    let execution: StepExecutionEntity = current;
    for (let executed = 0; ; executed++) {
      if (executed >= maxExecutions) {
        throw new Error(
          `speedrunCurrentStep exceeded maxExecutions (${maxExecutions}). Step '${execution.stepName}' of ` +
            `${row.type} ${row.id} may be in an infinite loop; raise maxExecutions if it really needs more.`,
        );
      }
      await this.perform(execution.id, { interruptible: false });
      const successor = await this.successorOf(row.id, execution.id);
      if (!successor || successor.state !== 'scheduled') return this.reloadExecution(execution.id);
      execution = successor;
    }
  }

  /**
   * Runs the current execution of a `@ResumableStep` for at most `count` iterations
   * (interruptibly), so it stops with a successor carrying the cursor; resolves to the execution
   * reloaded. Throws "No current step execution to run" when there is none.
   */
  async runIterations(
    workflow: WorkflowLike,
    opts: { count: number },
  ): Promise<StepExecutionEntity> {
    const count = positiveInteger(opts?.count, 'runIterations', 'count');
    const row = await this.load(workflowIdOf(workflow));
    const current = await this.runnableCurrent(row, 'runIterations');
    if (!current) throw new Error(`No current step execution to run on ${row.type} ${row.id}.`);
    const step = this.registry.findByName(row.type)?.steps.named(current.stepName);
    if (step?.kind !== 'resumable') {
      throw new Error(
        `runIterations needs a @ResumableStep, but the current step '${current.stepName}' of ${row.type} is ` +
          `${step ? 'a plain @Step' : 'not defined'}. Use performNextStep() for plain steps.`,
      );
    }
    await this.perform(current.id, { interruptible: true, maxIterations: count });
    return this.reloadExecution(current.id);
  }

  /** Every job recorded by the in-process queue since boot, oldest first. */
  enqueuedJobs(): EnqueuedJob[] {
    return this.queue.recorded();
  }

  /** The workflow (reloaded) is in `state`. */
  async assertWorkflowState(workflow: WorkflowLike, state: WorkflowState): Promise<void> {
    const row = await this.load(workflowIdOf(workflow));
    if (row.state !== state) {
      throw new Error(
        `Expected workflow ${row.type} ${row.id} to be '${state}', but it is '${row.state}'.`,
      );
    }
  }

  /** Some execution of `stepName` is in `state` (default `completed`). */
  async assertStepExecuted(
    workflow: WorkflowLike,
    stepName: string,
    opts: { state?: StepExecutionState } = {},
  ): Promise<void> {
    const state = opts.state ?? 'completed';
    const row = await this.load(workflowIdOf(workflow));
    const executions = (await this.service.executionHistory(row.id)).filter(
      (e) => e.stepName === stepName,
    );
    if (executions.some((execution) => execution.state === state)) return;
    const seen = executions.length > 0 ? executions.map((e) => `'${e.state}'`).join(', ') : 'none';
    throw new Error(
      `Expected step '${stepName}' of ${row.type} ${row.id} to have an execution in state '${state}', ` +
        `but its executions are: ${seen}.`,
    );
  }

  /**
   * The current execution is parked (`waiting`) and, when `name` is given, its step waits for
   * the signal of that name.
   */
  async assertWaitingForSignal(workflow: WorkflowLike, name?: string): Promise<void> {
    const row = await this.load(workflowIdOf(workflow));
    const current = await this.service.currentExecution(row.id);
    const expected = name === undefined ? 'a signal' : `signal '${name}'`;
    if (current?.state !== 'waiting') {
      throw new Error(
        `Expected ${row.type} ${row.id} to be waiting for ${expected}, but ` +
          (current
            ? `its current execution (step '${current.stepName}') is '${current.state}'.`
            : `it has no current step execution (workflow '${row.state}').`),
      );
    }
    if (name === undefined) return;
    const matcher = this.waitForOf(row, current);
    const awaited = matcherName(matcher);
    if (awaited !== name) {
      throw new Error(
        `Expected ${row.type} ${row.id} to be waiting for signal '${name}', but step '${current.stepName}' ` +
          `waits for ${describeMatcher(matcher)}.`,
      );
    }
  }

  /**
   * Fires the timeout of the workflow's parked execution now, as if its `timeout` had passed:
   * its `onTimeout` (or exception policy) applies and the body does not run. Resolves to that
   * execution reloaded. Throws `InvalidStateError` when the current execution is not waiting,
   * its step has no `timeout`, or the workflow is paused.
   */
  async expireWait(workflow: WorkflowLike): Promise<StepExecutionEntity> {
    const row = await this.load(workflowIdOf(workflow));
    const current = await this.service.currentExecution(row.id);
    const refuse = (why: string) =>
      new InvalidStateError(`Cannot expireWait on ${row.type} ${row.id}: ${why}.`);
    if (current?.state !== 'waiting') {
      throw refuse(
        current
          ? `its current execution (step '${current.stepName}') is '${current.state}', not waiting`
          : `it has no current step execution (workflow '${row.state}')`,
      );
    }
    if (!current.waitDeadlineAt) {
      throw refuse(`step '${current.stepName}' has no timeout (add timeout to its @Step options)`);
    }
    if (row.state !== 'ready') throw refuse(`the workflow is ${row.state}; resume it first`);
    await this.expirer.expire(row.id, current.id, { force: true });
    return this.reloadExecution(current.id);
  }

  /** The most recent signal named `name` delivered to the workflow is in `state`. */
  async assertSignalState(workflow: WorkflowLike, name: string, state: SignalState): Promise<void> {
    const row = await this.load(workflowIdOf(workflow));
    const latest = (await this.service.signals(row.id))
      .filter((signal) => signal.name === name)
      .at(-1);
    if (!latest) {
      throw new Error(
        `Expected signal '${name}' of ${row.type} ${row.id} to be '${state}', but no signal of that name was delivered.`,
      );
    }
    if (latest.state !== state) {
      throw new Error(
        `Expected signal '${name}' of ${row.type} ${row.id} to be '${state}', but the most recent one ` +
          `(${latest.id}) is '${latest.state}'.`,
      );
    }
  }

  /** The current execution's cursor deep-equals `value`. */
  async assertCursor(workflow: WorkflowLike, value: unknown): Promise<void> {
    const row = await this.load(workflowIdOf(workflow));
    const current = await this.service.currentExecution(row.id);
    if (!current) {
      throw new Error(
        `Expected cursor ${format(value)}, got no current step execution (${row.type} ${row.id} is '${row.state}').`,
      );
    }
    if (!isDeepStrictEqual(current.cursor, value)) {
      throw new Error(
        `Expected cursor ${format(value)}, got ${format(current.cursor)} (step '${current.stepName}', execution ${current.id}).`,
      );
    }
  }

  /**
   * The most recent completed execution of `stepName` has a successor (an execution continuing
   * from it) and that successor is `scheduled`.
   */
  async assertStepHasSuccessor(workflow: WorkflowLike, stepName: string): Promise<void> {
    const row = await this.load(workflowIdOf(workflow));
    const completed = (await this.service.executionHistory(row.id))
      .filter((e) => e.stepName === stepName && e.state === 'completed')
      .at(-1);
    const subject = `step '${stepName}' of ${row.type} ${row.id}`;
    if (!completed) {
      throw new Error(
        `Expected ${subject} to have a completed execution with a scheduled successor, but none of its executions is completed.`,
      );
    }
    const successor = await this.successorOf(row.id, completed.id);
    if (!successor) {
      throw new Error(
        `Expected ${subject} to have a scheduled successor, but its completed execution ${completed.id} ` +
          `(outcome '${completed.outcome}') has no successor.`,
      );
    }
    if (successor.state !== 'scheduled') {
      throw new Error(
        `Expected ${subject} to have a 'scheduled' successor, but successor ${successor.id} is '${successor.state}'.`,
      );
    }
  }

  /** The one place helpers hand an execution to the runner. */
  private perform(executionId: string, mode: RunMode): Promise<void> {
    return this.runner.runExecution(executionId, {
      interruptible: mode.interruptible,
      maxIterations: mode.maxIterations ?? null,
    });
  }

  /**
   * The current execution, or null; throws on a parked one (naming the awaited signal) and on
   * one already in progress, which the helper cannot run.
   */
  private async runnableCurrent(
    row: WorkflowEntity,
    helper: string,
  ): Promise<StepExecutionEntity | null> {
    const current = await this.service.currentExecution(row.id);
    if (!current) return null;
    if (current.state === 'waiting') {
      const matcher = this.waitForOf(row, current);
      const signal = matcherName(matcher);
      throw new Error(
        `${helper}: ${row.type} ${row.id} is parked at step '${current.stepName}' waiting for ` +
          `${describeMatcher(matcher)}. Deliver it first, e.g. ` +
          `workflowService.signal(workflow, '${signal ?? 'signal_name'}', { payload }).`,
      );
    }
    if (current.state === 'in_progress') {
      throw new Error(
        `${helper}: execution ${current.id} of step '${current.stepName}' (${row.type} ${row.id}) is already ` +
          'in progress (running elsewhere, e.g. with autoRun, or left stuck); the helper cannot run it.',
      );
    }
    return current;
  }

  /** The execution continuing from `executionId` (a resumable chain), if any. */
  private async successorOf(
    workflowId: string,
    executionId: string,
  ): Promise<StepExecutionEntity | null> {
    const successor = await this.repository.successorOf(null, executionId);
    return successor?.workflowId === workflowId ? successor : null;
  }

  private waitForOf(row: WorkflowEntity, execution: StepExecutionEntity): SignalMatcherLike | null {
    return this.registry.findByName(row.type)?.steps.named(execution.stepName)?.waitFor ?? null;
  }

  private async load(id: string): Promise<WorkflowEntity> {
    const row = await this.service.find(id);
    if (!row) throw workflowNotFound(id);
    return row;
  }

  private async reloadExecution(id: string): Promise<StepExecutionEntity> {
    const execution = await this.repository.findExecution(id);
    if (!execution) throw new Error(`Step execution ${id} disappeared while the helper ran it.`);
    return execution;
  }
}

function positiveInteger(value: unknown, helper: string, option: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new InvalidArgumentError(
      `${helper}: ${option} must be a positive integer, got ${format(value)}.`,
    );
  }
  return value;
}

function availableSteps(definition: WorkflowDefinition): string {
  return definition.steps.runnable.map((step) => step.name).join(', ') || '(none)';
}

/** The signal name a matcher waits for, when it has one (`SignalMatcher` does). */
function matcherName(matcher: SignalMatcherLike | null): string | null {
  const name = (matcher as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : null;
}

function describeMatcher(matcher: SignalMatcherLike | null): string {
  if (!matcher) return 'a signal (its step declares no waitFor any more)';
  const name = matcherName(matcher);
  return name !== null
    ? `signal '${name}'`
    : `a signal accepted by a custom matcher (${matcher.constructor.name})`;
}

function format(value: unknown): string {
  return inspect(value, { depth: 6, breakLength: Infinity });
}
