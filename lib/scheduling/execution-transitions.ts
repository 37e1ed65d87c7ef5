import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { StepExecutionOutcome } from '../interfaces/states.interface';

type TerminalState = 'completed' | 'failed' | 'canceled' | 'skipped';

const TIMESTAMP_OF: Record<TerminalState, 'completedAt' | 'failedAt' | 'canceledAt' | 'skippedAt'> =
  {
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

/**
 * The error as stored in `metadata.exception`: well-formed Unicode (see `wellFormedText`); NUL
 * stays, JSON carries it escaped.
 */
export function exceptionInfo(error: Error): {
  class: string;
  message: string;
  backtrace: string[];
} {
  return {
    class: wellFormedText(errorClassName(error)),
    message: wellFormedText(error.message),
    backtrace: wellFormedText(error.stack ?? '')
      .split('\n')
      .slice(1)
      .map((line) => line.trim()),
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

/** A high surrogate not followed by a low one, or a low surrogate not preceded by a high one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `text` as well-formed Unicode: each lone surrogate becomes U+FFFD, as
 * `String.prototype.toWellFormed` does. An error's text cannot be refused, and a lone surrogate
 * is no character any database keeps: MariaDB's JSON_VALID check rejects the JSON copy (the
 * finalize would fail and leave the execution in progress), and SQLite returns three U+FFFD where
 * PostgreSQL returns one. Replaced here, every database stores and returns the same text.
 */
export function wellFormedText(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * Text for the error columns: well-formed (`wellFormedText`) and without NUL, which PostgreSQL
 * text refuses (also U+FFFD), so that an error message carrying one cannot fail the finalize.
 */
export function storableText(text: string): string {
  const wellFormed = wellFormedText(text);
  return wellFormed.includes('\u0000') ? wellFormed.replaceAll('\u0000', '\uFFFD') : wellFormed;
}
