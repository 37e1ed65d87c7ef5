import { performance } from 'node:perf_hooks';
import type { Type } from '@nestjs/common';
import { Step, Workflow, type StepContext } from '../../lib';
import { Order } from '../../test/fixtures/order.entity';
import type { StepTimeline } from './step-timeline';

/**
 * A workflow of `steps` trivial steps (`tick_1 … tick_<steps>`, one `@Step({ repeat })`), each
 * recording its body's start and end on `timeline`. Registered as `name`; the hero is an `Order`,
 * loaded before every step as in any real workflow.
 */
export function chainWorkflow(
  name: string,
  steps: number,
  timeline: StepTimeline | null,
): Type<object> {
  @Workflow({ name, hero: () => Order })
  class ChainWorkflow {
    @Step({ repeat: { times: steps } })
    tick(ctx: StepContext<Order>) {
      const startedAt = performance.now();
      const index = Number(ctx.stepName.slice('tick_'.length)) - 1;
      timeline?.record(ctx.workflow.id, index, startedAt, performance.now());
    }
  }
  return ChainWorkflow;
}

/**
 * A workflow of one step that parks until signal `go` (no job, no timer while it waits), then
 * calls `onWake` with the workflow id first thing in its body. Registered as `name`.
 */
export function parkedWorkflow(name: string, onWake?: (workflowId: string) => void): Type<object> {
  @Workflow({ name, hero: () => Order })
  class ParkedWorkflow {
    @Step({ waitFor: 'go' })
    wake(ctx: StepContext<Order>) {
      onWake?.(ctx.workflow.id);
    }
  }
  return ParkedWorkflow;
}
