import type { LoggerService } from '@nestjs/common';
import type { SignalEntity } from '../entities/signal.entity';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import type { Duration } from './states.interface';

/**
 * What `@CancelIf` methods, `skipIf` and signal matchers receive. A workflow with
 * `mayProceedWithoutHero` declares `WorkflowContext<Order | null>` to see the null.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface WorkflowContext<Hero = any> {
  readonly workflow: WorkflowEntity;
  readonly hero: Hero;
}

/**
 * Step-execution metadata helpers (`ctx.metadata`); values are kept in memory until the step
 * finalizes, then stored as JSON under the execution's `metadata.user`.
 */
export interface StepMetadataHelpers {
  /** The value under `key` (set in this step, or already stored on the execution); else undefined. */
  get<T = unknown>(key: string): T | undefined;
  /**
   * Sets `key` to `value`, which must be JSON data: null, booleans, finite numbers, strings, and
   * arrays and plain objects of them; a `Date` within years 1–9999 is stored as its ISO string,
   * and an object with `toJSON()` as what that returns. `undefined` removes the key.
   *
   * @throws InvalidArgumentError when `key` is not a string, or `value` holds something JSON
   * cannot store faithfully (a BigInt, NaN or ±Infinity, a function or symbol, an `undefined`
   * array element, a Map/Set/RegExp/Error, a circular reference) or an invalid Date or a Date
   * outside years 1–9999 (SPEC §16.1). Thrown at the call, so the step's exception policy handles
   * it; the keys set before it are kept.
   */
  set(key: string, value: unknown): void;
}

export interface ReattemptOptions {
  wait?: Duration;
  /** resumable steps only: clear the cursor so the successor starts over */
  rewind?: boolean;
}

export interface SuspendOptions {
  wait?: Duration;
}

/** What a step method receives. Each flow-control verb stops the step at once. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface StepContext<Hero = any> extends WorkflowContext<Hero> {
  readonly stepExecution: StepExecutionEntity;
  readonly stepName: string;
  readonly receivedSignal: SignalEntity | null;
  /** 0.2 (SPEC §16.6): the `context` given to start() (captured CLS keys included), or {}. */
  readonly context: Readonly<Record<string, unknown>>;
  /** tagged with the workflow and execution tags */
  readonly logger: LoggerService;
  readonly metadata: StepMetadataHelpers;
  /** Each verb stops the step at once; honored even when user code swallows what was thrown. */
  cancel(): never;
  pause(): never;
  skip(): never;
  finish(): never;
  reattempt(options?: ReattemptOptions): never;
  /** Resumable steps only; elsewhere `InvalidStateError`. */
  suspend(options?: SuspendOptions): never;
}
