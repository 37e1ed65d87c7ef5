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

/** Step-execution metadata helpers; values are kept in memory until the step finalizes. */
export interface StepMetadataHelpers {
  get<T = unknown>(key: string): T | undefined;
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
