import { Injectable } from '@nestjs/common';
import { CursorTooLargeError } from '../errors/cursor-too-large.error';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import type { WorkflowState } from '../interfaces/states.interface';
import { WorkflowRepository } from '../ports/workflow.repository';
import type { InterruptionPolicy } from '../resumable/interruption-policy';
import { IterableStepImpl } from '../resumable/iterable-step';
import { ShutdownSignal } from '../resumable/shutdown.signal';
import { StepInterruption } from '../resumable/step-interruption';
import { cursorTransformer } from '../entities/json-column.transformer';
import { asError } from '../scheduling/execution-transitions';
import { FlowControlSignal } from './flow-control';
import type { PreparedStep, RunOptions, StepResult, StepRun } from './prepared-step.interface';
import { StepContextImpl } from './step-context';

/** Optional hook methods of a workflow class. */
interface WorkflowHooks {
  beforeStepExecution?(ctx: StepContextImpl<unknown>): unknown;
  afterStepExecution?(ctx: StepContextImpl<unknown>): unknown;
  aroundStepExecution?(ctx: StepContextImpl<unknown>, next: () => Promise<void>): unknown;
}

/**
 * The run phase, with no lock held: hooks around the step body, flow control caught and recorded,
 * exceptions captured (not yet reported). Resumable steps get an `IterableStep` whose checkpoints
 * persist the cursor and may interrupt.
 */
@Injectable()
export class StepInvoker {
  constructor(
    private readonly repository: WorkflowRepository,
    private readonly shutdown: ShutdownSignal,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  async invoke(prepared: PreparedStep, runOptions: RunOptions): Promise<StepRun> {
    const { definition, step, workflow, execution, hero, receivedSignal, logger } = prepared;
    const instance = definition.instance as WorkflowHooks & Record<string, unknown>;
    const resumable = step.kind === 'resumable';
    const ctx = new StepContextImpl<unknown>(
      workflow,
      hero,
      execution,
      receivedSignal,
      logger,
      resumable,
    );
    const iterable = resumable ? this.iterableFor(prepared, runOptions) : null;
    let error: Error | null = null;
    const capture = (thrown: unknown) => {
      if (!(thrown instanceof FlowControlSignal) && !(thrown instanceof StepInterruption))
        error ??= asError(thrown);
    };
    const body = async () => {
      try {
        const method = instance[step.methodName!] as (...args: unknown[]) => unknown;
        await (iterable ? method.call(instance, iterable, ctx) : method.call(instance, ctx));
      } catch (thrown) {
        capture(thrown);
      }
    };

    try {
      await instance.beforeStepExecution?.(ctx);
      if (instance.aroundStepExecution) {
        let nextCalled = false;
        await instance.aroundStepExecution(ctx, async () => {
          nextCalled = true;
          await body();
        });
        if (!nextCalled) {
          logger.warn(
            'aroundStepExecution never called next(): the step completes without running its body',
          );
        }
      } else {
        await body();
      }
    } catch (thrown) {
      capture(thrown);
    }
    try {
      await instance.afterStepExecution?.(ctx);
    } catch (thrown) {
      capture(thrown);
    }
    return { result: resultOf(ctx, iterable?.interrupted ?? null, error), ctx };
  }

  private iterableFor(prepared: PreparedStep, runOptions: RunOptions): IterableStepImpl {
    const { execution, step, workflow } = prepared;
    const startedAt = Date.now();
    const maxIterations = runOptions.maxIterations ?? step.maxIterations;
    // The workflow state read by the latest cursor write, when it could read it in the same statement.
    let stateAtWrite: WorkflowState | null = null;
    const interrupter: InterruptionPolicy = {
      shouldInterrupt: async (iterations) => {
        const observed = stateAtWrite;
        stateAtWrite = null;
        if (!runOptions.interruptible) return null;
        if (maxIterations !== null && iterations >= maxIterations) return 'maxIterations';
        if (step.maxRuntimeMs !== null && Date.now() - startedAt >= step.maxRuntimeMs)
          return 'maxRuntime';
        if (this.shutdown.requested) return 'shutdown';
        const state = observed ?? (await this.repository.workflowState(workflow.id));
        return state === 'paused' || state === 'canceled' ? `workflow ${state}` : null;
      },
    };
    const writeCursor = async (cursor: unknown) => {
      this.checkCursorSize(cursor, step.name);
      stateAtWrite = await this.repository.writeCursor(execution, cursor);
      execution.cursor = cursor;
    };
    return new IterableStepImpl(
      execution.cursor,
      execution.continuesFromId !== null,
      writeCursor,
      interrupter,
    );
  }

  private checkCursorSize(cursor: unknown, stepName: string): void {
    const limit = this.options.maxCursorSize;
    if (limit === null) return;
    const bytes = Buffer.byteLength(JSON.stringify(cursorTransformer.to(cursor)) ?? 'null', 'utf8');
    if (bytes > limit) {
      throw new CursorTooLargeError(
        `The cursor of step '${stepName}' is ${bytes} bytes of JSON, over maxCursorSize (${limit}). ` +
          'Keep cursors small (an id or an offset), or raise maxCursorSize.',
      );
    }
  }
}

function resultOf(
  ctx: StepContextImpl<unknown>,
  interruption: StepInterruption | null,
  error: Error | null,
): StepResult {
  if (ctx.request) return { kind: 'flow', request: ctx.request, swallowedError: error };
  if (interruption)
    return { kind: 'interrupted', reason: interruption.reason, waitMs: interruption.waitMs };
  if (error) return { kind: 'error', error };
  return { kind: 'completed' };
}
