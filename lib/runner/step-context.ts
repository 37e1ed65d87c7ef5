import type { LoggerService } from '@nestjs/common';
import { waitProblem } from '../common/duration';
import { describeValue, jsonDataProblem } from '../common/input-guards';
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

const NO_CONTEXT: Readonly<Record<string, unknown>> = Object.freeze({});

/** The `StepContext` a step receives. Records the first flow-control request it sees. */
export class StepContextImpl<Hero = unknown> implements StepContext<Hero> {
  private firstRequest: FlowControlRequest | null = null;
  private readonly userMetadata: Record<string, unknown>;
  readonly metadata: StepMetadataHelpers;
  readonly context: Readonly<Record<string, unknown>>;

  constructor(
    readonly workflow: WorkflowEntity,
    readonly hero: Hero,
    readonly stepExecution: StepExecutionEntity,
    readonly receivedSignal: SignalEntity | null,
    readonly logger: LoggerService,
    private readonly resumable: boolean,
  ) {
    this.context = workflow.context ?? NO_CONTEXT;
    this.userMetadata = {
      ...((stepExecution.metadata?.user as Record<string, unknown> | undefined) ?? {}),
    };
    this.metadata = {
      get: <T>(key: string) =>
        Object.prototype.hasOwnProperty.call(this.userMetadata, key)
          ? (this.userMetadata[key] as T)
          : undefined,
      set: (key: string, value: unknown) => this.setUserMetadata(key, value),
    };
  }

  /**
   * `ctx.metadata.set()`: the value must be JSON data (see `jsonDataProblem`), checked here so that
   * a bad one throws at the call, where the step's exception policy handles it, instead of failing
   * the finalize (a BigInt) or being stored as something else (NaN as null). `undefined` removes
   * the key, as JSON would leave it out. Any key is an own key (`'__proto__'` included).
   */
  private setUserMetadata(key: string, value: unknown): void {
    if (typeof key !== 'string') {
      throw new InvalidArgumentError(
        `ctx.metadata.set(key, value) takes a string key, but got ${describeValue(key)}.`,
      );
    }
    if (value === undefined) {
      delete this.userMetadata[key];
      return;
    }
    const problem = jsonDataProblem({ [key]: value }, 'metadata');
    if (problem) {
      throw new InvalidArgumentError(
        `ctx.metadata.set() ${problem}. Step metadata is stored as JSON (step execution metadata.user): store plain data.`,
      );
    }
    Object.defineProperty(this.userMetadata, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
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
    checkVerbOptions(options, 'reattempt', ['wait', 'rewind']);
    if (options.rewind !== undefined && typeof options.rewind !== 'boolean') {
      throw new InvalidArgumentError(
        `ctx.reattempt({ rewind }) takes a boolean, but got ${describeValue(options.rewind)}.`,
      );
    }
    return this.stop({ action: 'reattempt', wait: options.wait, rewind: options.rewind === true });
  }

  suspend(options: SuspendOptions = {}): never {
    if (!this.resumable) {
      throw new InvalidStateError(
        `ctx.suspend() can only be called from inside a @ResumableStep, but '${this.stepName}' is a plain @Step. Use ctx.reattempt({ wait }) instead.`,
      );
    }
    checkVerbOptions(options, 'suspend', ['wait']);
    return this.stop({ action: 'suspend', wait: options.wait });
  }

  private stop(request: FlowControlRequest): never {
    this.firstRequest ??= request;
    throw new FlowControlSignal(request);
  }
}

/**
 * The options of `ctx.reattempt()`/`ctx.suspend()`: an object of the known keys whose `wait`, if
 * any, is a duration ending by 9999-12-31 (see `waitProblem`). Thrown from the verb, before the
 * request is recorded, so the step's exception policy handles it like any other error.
 */
function checkVerbOptions(options: unknown, verb: string, keys: string[]): void {
  const shape = `{ ${keys.map((key) => `${key}?`).join(', ')} }`;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(
      `ctx.${verb}() takes options ${shape}, but got ${describeValue(options)}.`,
    );
  }
  const unknown = Object.keys(options).filter((key) => !keys.includes(key));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(
      `ctx.${verb}() got unknown option(s) ${unknown.join(', ')}. Allowed: ${keys.join(', ')}.`,
    );
  }
  const { wait } = options as { wait?: unknown };
  const problem = wait === undefined ? null : waitProblem(wait);
  if (problem) throw new InvalidArgumentError(`ctx.${verb}({ wait }) ${problem}.`);
}
