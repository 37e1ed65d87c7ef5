import { formatValue, parseDurationOrNull } from '../common/duration';
import { dueTimeProblem } from '../common/input-guards';
import { StepConfigurationError } from '../errors/step-configuration.error';
import type {
  DeclarativeExceptionPolicyOptions,
  ErrorMatcher,
  ErrorPredicate,
  ExceptionAction,
  ImperativeExceptionPolicyOptions,
  ReportMode,
  TerminalAction,
} from '../interfaces/exception-policy.interface';
import type { StepContext } from '../interfaces/workflow-context.interface';

const ACTIONS: readonly ExceptionAction[] = ['pause', 'cancel', 'reattempt', 'skip'];
const TERMINAL_ACTIONS: readonly TerminalAction[] = ['pause', 'cancel', 'skip'];
const REPORT_MODES: readonly ReportMode[] = ['always', 'never', 'terminalOnly'];
const DECLARATIVE_KEYS = [
  'matching',
  'wait',
  'jitter',
  'maxReattempts',
  'terminalAction',
  'report',
];
const IMPERATIVE_KEYS = ['matching', 'handler', 'report'];

/**
 * What a reattempt policy waits: a Duration or a backoff strategy. (Spelled as an indexed type:
 * `Duration | BackoffStrategy` written out repeats the strategy names, which `Duration`'s `string`
 * already covers, and lint flags the union as redundant.)
 */
export type PolicyWait = NonNullable<DeclarativeExceptionPolicyOptions['wait']>;

/** Default reattempt limit of a `'reattempt'` policy. */
export const DEFAULT_MAX_REATTEMPTS = 100;

/**
 * What to do when a step throws: a declarative action (`new ExceptionPolicy('reattempt', { ... })`)
 * or an imperative handler (`new ExceptionPolicy({ handler })`). Invalid combinations throw
 * `StepConfigurationError` here, at construction.
 */
export class ExceptionPolicy {
  /** The declarative action; null for an imperative policy. */
  readonly action: ExceptionAction | null;
  readonly matchers: readonly ErrorMatcher[];
  readonly wait: PolicyWait | null;
  readonly jitter: number | null;
  /** null means unlimited. */
  readonly maxReattempts: number | null;
  readonly terminalAction: TerminalAction;
  readonly report: ReportMode;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  readonly handler: ((error: Error, ctx: StepContext<any>) => unknown) | null;

  constructor(action: ExceptionAction, options?: DeclarativeExceptionPolicyOptions);
  constructor(options: ImperativeExceptionPolicyOptions);
  constructor(
    actionOrOptions: ExceptionAction | ImperativeExceptionPolicyOptions,
    options: DeclarativeExceptionPolicyOptions = {},
  ) {
    if (typeof actionOrOptions === 'string') {
      if (!ACTIONS.includes(actionOrOptions)) {
        throw policyError(
          `unknown action ${formatValue(actionOrOptions)}; use one of ${ACTIONS.join(', ')}`,
        );
      }
      if (options === null || typeof options !== 'object' || Array.isArray(options)) {
        throw policyError(`options must be an object, but were ${formatValue(options)}`);
      }
      rejectUnknownKeys(options, DECLARATIVE_KEYS);
      this.action = actionOrOptions;
      this.handler = null;
      this.matchers = normalizeMatchers(options.matching);
      this.report = validateReport(options.report);
      const reattempt = actionOrOptions === 'reattempt';
      for (const key of ['wait', 'jitter', 'maxReattempts', 'terminalAction'] as const) {
        if (!reattempt && options[key] !== undefined) {
          throw policyError(`${key} is only allowed with the 'reattempt' action`);
        }
      }
      this.wait = validateWait(options.wait);
      this.jitter = validateJitter(options.jitter, this.wait);
      this.maxReattempts = validateMaxReattempts(options);
      if (
        options.terminalAction !== undefined &&
        !TERMINAL_ACTIONS.includes(options.terminalAction)
      ) {
        throw policyError(
          `terminalAction ${formatValue(options.terminalAction)} is invalid; use one of ${TERMINAL_ACTIONS.join(', ')}`,
        );
      }
      this.terminalAction = options.terminalAction ?? 'pause';
      return;
    }
    if (actionOrOptions === null || typeof actionOrOptions !== 'object') {
      throw policyError('expects an action name or an options object with a handler');
    }
    rejectUnknownKeys(actionOrOptions, IMPERATIVE_KEYS);
    if (typeof actionOrOptions.handler !== 'function') {
      throw policyError(
        "needs either an action ('pause' | 'cancel' | 'reattempt' | 'skip') or a handler function",
      );
    }
    this.action = null;
    this.handler = actionOrOptions.handler;
    this.matchers = normalizeMatchers(actionOrOptions.matching);
    this.report = validateReport(actionOrOptions.report);
    this.wait = null;
    this.jitter = null;
    this.maxReattempts = null;
    this.terminalAction = 'pause';
  }

  /** A policy without `matching` applies to every error. */
  get isBlanket(): boolean {
    return this.matchers.length === 0;
  }

  /** Whether this policy applies to the error. */
  captures(error: unknown): boolean {
    if (this.isBlanket) return true;
    return this.matchers.some((matcher) =>
      isErrorClass(matcher)
        ? error instanceof matcher
        : Boolean((matcher as ErrorPredicate)(error)),
    );
  }
}

/** A function whose prototype is (or inherits) Error.prototype is an error class. */
export function isErrorClass(matcher: ErrorMatcher): matcher is abstract new () => Error {
  const proto: unknown = (matcher as { prototype?: unknown }).prototype;
  return proto === Error.prototype || proto instanceof Error;
}

function policyError(problem: string): StepConfigurationError {
  return new StepConfigurationError(`ExceptionPolicy ${problem}.`);
}

function rejectUnknownKeys(options: object, allowed: string[]): void {
  const unknown = Object.keys(options).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw policyError(
      `has unknown option(s) ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`,
    );
  }
}

function normalizeMatchers(matching: ErrorMatcher | ErrorMatcher[] | undefined): ErrorMatcher[] {
  if (matching === undefined) return [];
  const list = Array.isArray(matching) ? matching : [matching];
  // An empty list would silently make a blanket policy that catches every error.
  if (list.length === 0) {
    throw policyError(
      'matching is an empty array; list at least one error class or predicate, or leave matching out to apply to every error',
    );
  }
  for (const matcher of list) {
    if (typeof matcher !== 'function') {
      throw policyError(
        `matching takes error classes or predicates (error) => boolean, but got ${formatValue(matcher)}`,
      );
    }
  }
  return [...list];
}

function validateReport(report: ReportMode | undefined): ReportMode {
  if (report === undefined) return 'always';
  if (!REPORT_MODES.includes(report)) {
    throw policyError(
      `report ${formatValue(report)} is invalid; use one of ${REPORT_MODES.join(', ')}`,
    );
  }
  return report;
}

/**
 * A strategy is checked when it is used (`decide()`); a plain duration here, also against the
 * last date the library stores: a reattempt `'500000 weeks'` from now would be due after
 * 9999-12-31 (SPEC §16.1).
 */
function validateWait(wait: PolicyWait | undefined): PolicyWait | null {
  if (wait === undefined) return null;
  if (wait === 'exponential' || wait === 'polynomial' || typeof wait === 'function') return wait;
  const ms = parseDurationOrNull(wait);
  if (ms === null) {
    throw policyError(
      `wait ${formatValue(wait)} is neither a duration nor a backoff strategy ('exponential', 'polynomial' or (attempt) => Duration)`,
    );
  }
  const problem = dueTimeProblem(ms);
  if (problem) throw policyError(`wait ${formatValue(wait)} ${problem}; use a shorter wait`);
  return wait;
}

function validateJitter(jitter: number | undefined, wait: PolicyWait | null): number | null {
  const isStrategy = wait === 'exponential' || wait === 'polynomial' || typeof wait === 'function';
  if (jitter === undefined) return isStrategy && typeof wait === 'string' ? 0.15 : null;
  if (!isStrategy) throw policyError('jitter is only allowed with a backoff strategy as wait');
  if (typeof jitter !== 'number' || !(jitter >= 0 && jitter <= 1)) {
    throw policyError(`jitter must be a number from 0 to 1, but was ${formatValue(jitter)}`);
  }
  return jitter;
}

function validateMaxReattempts(options: DeclarativeExceptionPolicyOptions): number | null {
  if (!('maxReattempts' in options) || options.maxReattempts === undefined) {
    return DEFAULT_MAX_REATTEMPTS;
  }
  const value = options.maxReattempts;
  if (value === null) return null;
  if (!Number.isInteger(value) || value <= 0) {
    throw policyError(
      `maxReattempts must be a positive integer or null, but was ${formatValue(value)}`,
    );
  }
  return value;
}
