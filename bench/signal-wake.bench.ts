/**
 * `npm run bench:signal-wake`: latency from `WorkflowService.signal()` to the woken step's body,
 * on a real app (PostgreSQL + BullMQ worker, fresh schema and queue prefix). N workflows
 * (BENCH_WAKEUPS, default 500) park at a `waitFor` step; each is then signaled one at a time,
 * unloaded. Prints one JSON line: p50/p95/p99 in ms, measured from the `signal()` call and from
 * its return (the body may start before `signal()` resolves: the job is enqueued right after
 * commit, so the second figure can be negative).
 */
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { cpus } from 'node:os';
import { Step, Workflow, type StepContext } from '../lib';
import { Order } from '../test/fixtures/order.entity';
import { EngineHarness } from '../test/e2e/support/engine-harness';

const WAKEUPS = Number(process.env.BENCH_WAKEUPS ?? 500);
const bodyStartedAt = new Map<string, number>();

/** Parks until `go`, then records when its body started. */
@Workflow({ hero: () => Order })
class WakeBenchWorkflow {
  @Step({ waitFor: 'go' }) wake(ctx: StepContext<Order>) {
    bodyStartedAt.set(ctx.workflow.id, performance.now());
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function summary(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const round = (n: number) => Math.round(n * 1000) / 1000;
  return { p50: round(percentile(sorted, 50)), p95: round(percentile(sorted, 95)), p99: round(percentile(sorted, 99)) };
}

async function main(): Promise<void> {
  const harness = await EngineHarness.boot({ workflows: [WakeBenchWorkflow], entities: [Order] });
  try {
    const orders = harness.dataSource.getRepository(Order);
    const ids: string[] = [];
    for (let i = 0; i < WAKEUPS; i++) {
      const order = await orders.save({ status: 'new' });
      ids.push((await harness.service.start(WakeBenchWorkflow, { hero: order })).id);
    }
    for (const id of ids) {
      await harness.waitForWorkflow(id, async () => (await harness.service.currentExecution(id))?.state === 'waiting', 60_000);
    }
    const fromCall: number[] = [];
    const fromReturn: number[] = [];
    for (const id of ids) {
      const called = performance.now();
      await harness.service.signal(id, 'go');
      const returned = performance.now();
      while (!bodyStartedAt.has(id)) await new Promise((resolve) => setImmediate(resolve));
      fromCall.push(bodyStartedAt.get(id)! - called);
      fromReturn.push(bodyStartedAt.get(id)! - returned);
    }
    console.log(
      JSON.stringify({
        name: 'signal-wake',
        parameters: { wakeups: WAKEUPS, concurrency: 10 },
        fromSignalCallMs: summary(fromCall),
        fromSignalReturnMs: summary(fromReturn),
        machine: { cpus: cpus().length, node: process.version },
      }),
    );
  } finally {
    await harness.close();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
