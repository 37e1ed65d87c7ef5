import type { LoggerService } from '@nestjs/common';
import { formatValue, isDuration } from '../common/duration';
import type { SignalEntity } from '../entities/signal.entity';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { InvalidStateError } from '../errors/invalid-state.error';
import type {
  ReattemptOptions,
  StepContext,
  StepMetadataHelpers,
  SuspendOptions,
} from '../interfaces/workflow-context.interface';
import { FlowControlSignal, type FlowControlRequest } from './flow-control';

/** The `StepContext` a step receives. Records the first flow-control request it sees. */
export class StepContextImpl<Hero = unknown> implements StepContext<Hero> {
  private firstRequest: FlowControlRequest | null = null;
  private readonly userMetadata: Record<string, unknown>;
  readonly metadata: StepMetadataHelpers;

  constructor(
    readonly workflow: WorkflowEntity,
    readonly hero: Hero,
    readonly stepExecution: StepExecutionEntity,
    readonly receivedSignal: SignalEntity | null,
    readonly logger: LoggerService,
    private readonly resumable: boolean,
  ) {
    this.userMetadata = { ...((stepExecution.metadata?.user as Record<string, unknown> | undefined) ?? {}) };
    this.metadata = {
      get: <T>(key: string) => this.userMetadata[key] as T | undefined,
      set: (key: string, value: unknown) => {
        this.userMetadata[key] = value;
      },
    };
  }

  get stepName(): string {
    return this.stepExecution.stepName;
  }

  /** The first flow-control request made during this step, if any. */
  get request(): FlowControlRequest | null {
    return this.firstRequest;
  }

  /** What `ctx.metadata.set()` stored, persisted under `metadata.user` at finalize. */
  get userMetadataValues(): Record<string, unknown> {
    return this.userMetadata;
  }

  cancel(): never {
    return this.stop({ action: 'cancel' });
  }

  pause(): never {
    return this.stop({ action: 'pause' });
  }

  skip(): never {
    return this.stop({ action: 'skip' });
  }

  finish(): never {
    return this.stop({ action: 'finish' });
  }

  reattempt(options: ReattemptOptions = {}): never {
    checkWait(options.wait, 'reattempt');
    return this.stop({ action: 'reattempt', wait: options.wait, rewind: options.rewind === true });
  }

  suspend(options: SuspendOptions = {}): never {
    if (!this.resumable) {
      throw new InvalidStateError(
        `ctx.suspend() can only be called from inside a @ResumableStep, but '${this.stepName}' is a plain @Step. Use ctx.reattempt({ wait }) instead.`,
      );
    }
    checkWait(options.wait, 'suspend');
    return this.stop({ action: 'suspend', wait: options.wait });
  }

  private stop(request: FlowControlRequest): never {
    this.firstRequest ??= request;
    throw new FlowControlSignal(request);
  }
}

function checkWait(wait: unknown, verb: string): void {
  if (wait !== undefined && !isDuration(wait)) {
    throw new InvalidArgumentError(
      `ctx.${verb}({ wait }) takes a duration (ms or a string such as '30s'), but got ${formatValue(wait)}.`,
    );
  }
}
