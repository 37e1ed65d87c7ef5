import type { EntityTarget, ObjectLiteral } from 'typeorm';
import type { ExceptionAction, TerminalAction } from './exception-policy.interface';
import type { StepJobOptions } from './job-options.interface';
import type { SignalMatcherLike } from './signal-matcher.interface';
import type { Duration } from './states.interface';
import type { WorkflowContext } from './workflow-context.interface';
import type { ExceptionPolicy } from '../api/exception-policy';

/** Options of `@Workflow()`. */
export interface WorkflowOptions {
  /** default: the class name; stored in `type` */
  name?: string;
  /** The hero's entity; gives `hero_type` without looking at the hero object. */
  hero?: () => EntityTarget<ObjectLiteral>;
  /** default false: a missing hero cancels the workflow */
  mayProceedWithoutHero?: boolean;
  stepJobOptions?: StepJobOptions;
  onException?: ExceptionPolicy | ExceptionPolicy[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type SkipIfOption = boolean | string | ((ctx: WorkflowContext<any>) => boolean | Promise<boolean>);

/** Options of `@Step()`. */
export interface StepOptions {
  wait?: Duration;
  waitFor?: string | SignalMatcherLike;
  /** a boolean, a predicate, or the name of a method of the workflow class */
  skipIf?: SkipIfOption;
  /** arrays hold ExceptionPolicy instances only */
  onException?: ExceptionAction | ExceptionPolicy | ExceptionPolicy[];
  /** only with onException: 'reattempt'; positive integer or null; default 100 */
  maxReattempts?: number | null;
  /** only with onException: 'reattempt' */
  terminalAction?: TerminalAction;
  beforeStep?: string;
  afterStep?: string;
  jobOptions?: StepJobOptions;
  /** Generates `<name>_1 … <name>_<times>`, each with `wait: every`. */
  repeat?: { times: number; every?: Duration };
  /**
   * Only with `waitFor`: how long the execution may stay waiting (from `waiting_since`) before the
   * engine acts as if the step had thrown `SignalWaitTimeoutError`. A signal claimed at the gate
   * never starts the clock.
   */
  timeout?: Duration;
  /** Only with `timeout`: what the timeout does; default: the step's resolved exception policy. */
  onTimeout?: ExceptionAction | ExceptionPolicy;
}

/** Options of `@ResumableStep()`. */
export interface ResumableStepOptions extends StepOptions {
  maxIterations?: number;
  maxRuntime?: Duration;
}
