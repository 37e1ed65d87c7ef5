import { Injectable } from '@nestjs/common';
import { asError } from './execution-transitions';
import { FlowControlSignal } from './flow-control';
import type { PreparedStep, StepResult, StepRun } from './prepared-step.interface';
import { StepContextImpl } from './step-context';

/** Optional hook methods of a workflow class. */
interface WorkflowHooks {
  beforeStepExecution?(ctx: StepContextImpl<unknown>): unknown;
  afterStepExecution?(ctx: StepContextImpl<unknown>): unknown;
  aroundStepExecution?(ctx: StepContextImpl<unknown>, next: () => Promise<void>): unknown;
}

/**
 * The run phase, with no lock held: hooks around the step body, flow control caught and recorded,
 * exceptions captured (not yet reported).
 */
@Injectable()
export class StepInvoker {
  async invoke(prepared: PreparedStep): Promise<StepRun> {
    const { definition, step, workflow, execution, hero, receivedSignal, logger } = prepared;
    const instance = definition.instance as WorkflowHooks & Record<string, unknown>;
    const ctx = new StepContextImpl<unknown>(
      workflow,
      hero,
      execution,
      receivedSignal,
      logger,
      step.kind === 'resumable',
    );
    let error: Error | null = null;
    const capture = (thrown: unknown) => {
      if (!(thrown instanceof FlowControlSignal)) error ??= asError(thrown);
    };
    const body = async () => {
      try {
        const method = instance[step.methodName!] as (c: StepContextImpl<unknown>) => unknown;
        await method.call(instance, ctx);
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
          logger.warn('aroundStepExecution never called next(): the step completes without running its body');
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
    return { result: this.resultOf(ctx, error), ctx };
  }

  private resultOf(ctx: StepContextImpl<unknown>, error: Error | null): StepResult {
    if (ctx.request) return { kind: 'flow', request: ctx.request, swallowedError: error };
    if (error) return { kind: 'error', error };
    return { kind: 'completed' };
  }
}
