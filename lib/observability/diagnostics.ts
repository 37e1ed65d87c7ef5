import diagnosticsChannel from 'node:diagnostics_channel';
import { parseDurationOrNull } from '../common/duration';
import type { StepDefinition } from '../discovery/step-definition.interface';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import type { StepExecutionState, WorkflowState } from '../interfaces/states.interface';
import type { StepResult } from '../runner/prepared-step.interface';

/** Names of the `node:diagnostics_channel` channels the runner publishes on. */
export const GENEVA_DRIVE_DIAGNOSTICS_CHANNELS = {
  /** After the preconditions (`@CancelIf`, `skipIf`) of an execution were evaluated. */
  precondition: 'geneva-drive:precondition',
  /** After the step body (with its hooks) ran. */
  step: 'geneva-drive:step',
  /** After the finalize transaction committed. */
  finalize: 'geneva-drive:finalize',
  /** After an execution parked waiting for a signal (its transaction committed). */
  park: 'geneva-drive:park',
  /**
   * After a parked execution's `timeout` fired and its transaction committed (the body did not
   * run); `geneva-drive:finalize` follows with the same states.
   */
  waitTimeout: 'geneva-drive:wait-timeout',
} as const;

/** Outcome of a `geneva-drive:precondition` event. */
export type PreconditionDiagnosticsOutcome = 'passed' | 'canceled' | 'skipped' | 'exception';

/** Outcome of a `geneva-drive:step` event. */
export type StepDiagnosticsOutcome =
  | 'completed'
  | 'interrupted'
  | 'cancel'
  | 'pause'
  | 'reattempt'
  | 'skip'
  | 'finished'
  | 'suspend'
  | 'exception';

/**
 * The message published on every geneva-drive diagnostics channel (the gem's
 * ActiveSupport::Notifications payloads, camelCased).
 *
 * ```ts
 * import diagnosticsChannel from 'node:diagnostics_channel';
 * diagnosticsChannel.subscribe('geneva-drive:step', (message) => {
 *   const event = message as GenevaDriveDiagnosticsEvent;
 *   if (event.outcome === 'exception') metrics.increment('steps.failed', { workflow: event.workflowClass });
 * });
 * ```
 * A subscriber that throws crashes the process (Node's behavior): catch inside it.
 */
export interface GenevaDriveDiagnosticsEvent {
  executionId: string;
  workflowId: string;
  /** The workflow's registered name (its `type`). */
  workflowClass: string;
  stepName: string;
  /** Present (true) for resumable steps only. */
  resumable?: true;
  /** Absent on `geneva-drive:finalize`. */
  outcome?: PreconditionDiagnosticsOutcome | StepDiagnosticsOutcome;
  /** The error, for outcome `'exception'`. */
  exception?: Error;
  /** Milliseconds, for interruptions (and a reattempt or suspend that asked for a wait). */
  wait?: number;
  /** On `geneva-drive:finalize` and `wait-timeout`: the workflow's state once the step was finalized. */
  workflowState?: WorkflowState;
  /** On `geneva-drive:finalize` and `wait-timeout`: the execution's state once the step was finalized. */
  stepState?: StepExecutionState;
}

const preconditionChannel = diagnosticsChannel.channel(
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.precondition,
);
const stepChannel = diagnosticsChannel.channel(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.step);
const finalizeChannel = diagnosticsChannel.channel(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.finalize);
const parkChannel = diagnosticsChannel.channel(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.park);
const waitTimeoutChannel = diagnosticsChannel.channel(
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.waitTimeout,
);

/** The rows an event describes. */
interface Subject {
  workflow: WorkflowEntity;
  execution: StepExecutionEntity;
  step: StepDefinition;
}

const PRECONDITION_OUTCOMES = {
  pass: 'passed',
  cancel: 'canceled',
  skip: 'skipped',
  exception: 'exception',
} as const satisfies Record<string, PreconditionDiagnosticsOutcome>;

function base({ workflow, execution, step }: Subject): GenevaDriveDiagnosticsEvent {
  return {
    executionId: execution.id,
    workflowId: workflow.id,
    workflowClass: workflow.type,
    stepName: execution.stepName,
    ...(step.kind === 'resumable' ? { resumable: true as const } : {}),
  };
}

/** `geneva-drive:precondition`; nothing is built when nobody subscribes. */
export function publishPrecondition(
  subject: Subject,
  verdict: keyof typeof PRECONDITION_OUTCOMES,
  exception?: unknown,
): void {
  if (!preconditionChannel.hasSubscribers) return;
  preconditionChannel.publish({
    ...base(subject),
    outcome: PRECONDITION_OUTCOMES[verdict],
    ...(verdict === 'exception' ? { exception: toError(exception) } : {}),
  } satisfies GenevaDriveDiagnosticsEvent);
}

/** `geneva-drive:step`, with the outcome of the body; nothing is built when nobody subscribes. */
export function publishStep(subject: Subject, result: StepResult): void {
  if (!stepChannel.hasSubscribers) return;
  stepChannel.publish({
    ...base(subject),
    ...stepOutcome(result),
  } satisfies GenevaDriveDiagnosticsEvent);
}

/** `geneva-drive:finalize`, with the states after finalize; nothing is built when nobody subscribes. */
export function publishFinalize(
  subject: Subject,
  states: { workflowState: WorkflowState; stepState: StepExecutionState } | undefined,
): void {
  if (!finalizeChannel.hasSubscribers) return;
  finalizeChannel.publish({ ...base(subject), ...states } satisfies GenevaDriveDiagnosticsEvent);
}

/** `geneva-drive:park`; nothing is built when nobody subscribes. */
export function publishPark(subject: Subject): void {
  if (!parkChannel.hasSubscribers) return;
  parkChannel.publish(base(subject) satisfies GenevaDriveDiagnosticsEvent);
}

/** `geneva-drive:wait-timeout`, with the states the timeout left; built only for subscribers. */
export function publishWaitTimeout(
  subject: Subject,
  states: { workflowState: WorkflowState; stepState: StepExecutionState },
): void {
  if (!waitTimeoutChannel.hasSubscribers) return;
  waitTimeoutChannel.publish({ ...base(subject), ...states } satisfies GenevaDriveDiagnosticsEvent);
}

/** The `outcome` (and exception, wait) a step result is reported with. */
export function stepOutcome(
  result: StepResult,
): Pick<GenevaDriveDiagnosticsEvent, 'outcome' | 'exception' | 'wait'> {
  switch (result.kind) {
    case 'completed':
      return { outcome: 'completed' };
    case 'error':
      return { outcome: 'exception', exception: result.error };
    case 'interrupted':
      return { outcome: 'interrupted', ...(result.waitMs !== null ? { wait: result.waitMs } : {}) };
    case 'flow': {
      const { request } = result;
      if (request.action === 'finish') return { outcome: 'finished' };
      if (request.action === 'reattempt' || request.action === 'suspend') {
        const wait = parseDurationOrNull(request.wait);
        return { outcome: request.action, ...(wait !== null ? { wait } : {}) };
      }
      return { outcome: request.action };
    }
  }
}

function toError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown));
}
