import type { SignalMatcherLike } from '../interfaces/signal-matcher.interface';
import type { StepJobOptions } from '../interfaces/job-options.interface';
import type { SkipIfOption } from '../interfaces/workflow-options.interface';
import type { ExceptionPolicy } from '../api/exception-policy';

/** A validated step, as the runner uses it. */
export interface StepDefinition {
  readonly name: string;
  readonly kind: 'step' | 'resumable' | 'removed';
  /** The workflow method that runs the step; null for a removed step. */
  readonly methodName: string | null;
  /** Delay before the step runs, in ms; null when none. */
  readonly waitMs: number | null;
  readonly waitFor: SignalMatcherLike | null;
  /** How long a parked execution may wait for its signal, in ms; null when unbounded. */
  readonly timeoutMs: number | null;
  /** The policy a wait timeout goes to; null: the step's resolved exception policy decides. */
  readonly onTimeout: ExceptionPolicy | null;
  readonly skipIf: SkipIfOption | null;
  /** Step-level policies, first match wins; null when the step declares none. */
  readonly policies: readonly ExceptionPolicy[] | null;
  readonly beforeStep: string | null;
  readonly afterStep: string | null;
  readonly jobOptions: StepJobOptions;
  readonly maxIterations: number | null;
  readonly maxRuntimeMs: number | null;
}
