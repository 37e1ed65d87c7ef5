import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { StepExecutionOutcome } from '../interfaces/states.interface';

type TerminalState = 'completed' | 'failed' | 'canceled' | 'skipped';

const TIMESTAMP_OF: Record<TerminalState, 'completedAt' | 'failedAt' | 'canceledAt' | 'skippedAt'> = {
  completed: 'completedAt',
  failed: 'failedAt',
  canceled: 'canceledAt',
  skipped: 'skippedAt',
};

/** The changes of a terminal transition: state, outcome, its timestamp and `finished_at`. */
export function terminalTransition(
  state: TerminalState,
  outcome: StepExecutionOutcome,
  now = new Date(),
): Partial<StepExecutionEntity> {
  return { state, outcome, [TIMESTAMP_OF[state]]: now, finishedAt: now };
}

/** The error as stored in `metadata.exception`. */
export function exceptionInfo(error: Error): { class: string; message: string; backtrace: string[] } {
  return {
    class: errorClassName(error),
    message: error.message,
    backtrace: (error.stack ?? '').split('\n').slice(1).map((line) => line.trim()),
  };
}

/** The error columns of a failed execution. */
export function errorColumns(
  error: Error,
): Pick<StepExecutionEntity, 'errorClassName' | 'errorMessage' | 'errorBacktrace'> {
  return {
    errorClassName: storableText(errorClassName(error)),
    errorMessage: storableText(error.message),
    errorBacktrace: storableText(exceptionInfo(error).backtrace.join('\n')),
  };
}

/** Any thrown value as an Error (user code may throw strings). */
export function asError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown));
}

function errorClassName(error: Error): string {
  const ctorName = (error.constructor as { name?: string } | undefined)?.name;
  return ctorName && ctorName !== 'Error' ? ctorName : error.name;
}

/** Text columns refuse NUL on PostgreSQL: an error message carrying one must not fail the finalize. */
function storableText(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}
