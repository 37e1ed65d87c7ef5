import type {
  SignalEntity,
  SignalState,
  StepExecutionEntity,
  StepExecutionOutcome,
  StepExecutionState,
} from 'nestjs-geneva-drive';

/** One row of a workflow's timeline, as `GET /workflows/:id` shows it. */
export interface TimelineEntry {
  step: string;
  state: StepExecutionState;
  outcome: StepExecutionOutcome | null;
  scheduledFor: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** Set while the execution is parked (`waiting`) at a `waitFor` gate. */
  waitingSince: Date | null;
  /** The signal the execution claimed at its `waitFor` gate. */
  signalId: string | null;
  /** A resumable step's checkpointed cursor (null for other steps). */
  cursor: unknown;
  error: { class: string; message: string | null } | null;
}

/** Maps `WorkflowService.executionHistory()` (oldest first) to timeline entries. */
export function toTimeline(history: StepExecutionEntity[]): TimelineEntry[] {
  return history.map((execution) => ({
    step: execution.stepName,
    state: execution.state,
    outcome: execution.outcome,
    scheduledFor: execution.scheduledFor,
    startedAt: execution.startedAt,
    finishedAt: execution.finishedAt,
    waitingSince: execution.waitingSince,
    signalId: execution.signalId,
    cursor: execution.cursor ?? null,
    error: errorOf(execution),
  }));
}

/**
 * The error that ended the execution. A failed execution has it in the error columns; a policy
 * reattempt (outcome `reattempted`) keeps it only in `metadata.exception`.
 */
function errorOf(execution: StepExecutionEntity): TimelineEntry['error'] {
  if (execution.errorClassName) {
    return { class: execution.errorClassName, message: execution.errorMessage };
  }
  const exception = execution.metadata?.exception as
    { class?: string; message?: string } | undefined;
  if (exception?.class) return { class: exception.class, message: exception.message ?? null };
  return null;
}

/** One signal delivered to a workflow, as `GET /workflows/:id` shows it. */
export interface SignalView {
  id: string;
  name: string;
  idempotencyKey: string | null;
  state: SignalState;
  payload: unknown;
  claimed: number;
  consumed: number;
  createdAt: Date;
  claimedAt: Date | null;
  consumedAt: Date | null;
}

export function toSignalView(signal: SignalEntity): SignalView {
  return {
    id: signal.id,
    name: signal.name,
    idempotencyKey: signal.idempotencyKey,
    state: signal.state,
    payload: signal.payload,
    claimed: signal.claimed,
    consumed: signal.consumed,
    createdAt: signal.createdAt,
    claimedAt: signal.claimedAt,
    consumedAt: signal.consumedAt,
  };
}
