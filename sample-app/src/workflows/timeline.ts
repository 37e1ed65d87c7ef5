import type {
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
