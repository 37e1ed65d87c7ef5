import type { Duration } from './states.interface';
import type { StepContext } from './workflow-context.interface';

export type ExceptionAction = 'pause' | 'cancel' | 'reattempt' | 'skip';
export type TerminalAction = 'pause' | 'cancel' | 'skip';
export type ReportMode = 'always' | 'never' | 'terminalOnly';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ErrorClass = abstract new (...args: any[]) => Error;
/** A function is a class matcher iff its prototype is (or inherits) Error.prototype. */
export type ErrorPredicate = (error: unknown) => boolean;
export type ErrorMatcher = ErrorClass | ErrorPredicate;

/** exponential = 2^attempt seconds; polynomial = attempt^4 + 2 seconds. */
export type BackoffStrategy = 'exponential' | 'polynomial' | ((attempt: number) => Duration);

export interface DeclarativeExceptionPolicyOptions {
  matching?: ErrorMatcher | ErrorMatcher[];
  /** only with 'reattempt' */
  // The contract's shape: a Duration string or one of the named strategies.
  // eslint-disable-next-line @typescript-eslint/no-redundant-type-constituents
  wait?: Duration | BackoffStrategy;
  /** 0..1, only with a backoff strategy */
  jitter?: number;
  /** positive integer or null (unlimited); only with 'reattempt'; default 100 */
  maxReattempts?: number | null;
  /** only with 'reattempt'; default 'pause' */
  terminalAction?: TerminalAction;
  /** default 'always' */
  report?: ReportMode;
}

export interface ImperativeExceptionPolicyOptions {
  matching?: ErrorMatcher | ErrorMatcher[];
  /** Calls a flow-control verb on `ctx`; if it calls none the workflow pauses. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  handler: (error: Error, ctx: StepContext<any>) => unknown;
  report?: ReportMode;
}
