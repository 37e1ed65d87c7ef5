/**
 * `npm run bench:throughput`: BENCH_WORKFLOWS workflows (default 200) of BENCH_STEPS trivial steps
 * (default 10) on a real app (PostgreSQL + BullMQ worker, fresh schema and prefix), at each worker
 * concurrency of BENCH_CONCURRENCY (default 8,32), and the same chains as raw BullMQ jobs (the
 * floor). One JSON line per concurrency: steps/s, step-to-step gap p50/p99, the floor's figures
 * and the engine's share of the floor's rate, medians over BENCH_RUNS runs (default 3).
 * `bench:dbos-throughput` measures DBOS Transact's chains, right after this one in `npm run bench`.
 */
import { chainWorkflow } from './support/bench.workflows';
import { createOrders } from './support/dataset';
import { bootEngine, runWorkflows } from './support/engine';
import { envInteger, envIntegers, runCount, warmUpRuns } from './support/env';
import { FinishLine } from './support/finish-line';
import { runBenchmark } from './support/main';
import { emit, repeatRuns } from './support/result';
import { StepTimeline } from './support/step-timeline';
import { runVersusFloor } from './support/versus-floor';

const WORKFLOWS = envInteger('BENCH_WORKFLOWS', 200);
const STEPS = envInteger('BENCH_STEPS', 10);
const CONCURRENCIES = envIntegers('BENCH_CONCURRENCY', [8, 32]);

const timeline = new StepTimeline();
const ThroughputWorkflow = chainWorkflow('ThroughputBenchWorkflow', STEPS, timeline);

async function measure(concurrency: number): Promise<void> {
  const harness = await bootEngine({ workflows: [ThroughputWorkflow], concurrency });
  const finishLine = new FinishLine();
  const unwatch = finishLine.watchEngine();
  try {
    // Unmeasured runs of the same size first (warmUpRuns): JIT warm-up, the pool's connections
    // and their prepared statements (each connection prepares on first use) stay out.
    for (let round = 0; round < warmUpRuns(WORKFLOWS * STEPS); round++)
      await runWorkflows(
        harness,
        ThroughputWorkflow,
        await createOrders(harness.dataSource, WORKFLOWS),
        finishLine,
      );
    const runs = await repeatRuns(runCount(), () =>
      runVersusFloor({
        harness,
        workflow: ThroughputWorkflow,
        workflows: WORKFLOWS,
        steps: STEPS,
        concurrency,
        timeline,
        finishLine,
      }),
    );
    await emit('throughput', { workflows: WORKFLOWS, steps: STEPS, concurrency }, runs);
  } finally {
    unwatch();
    await harness.close();
  }
}

runBenchmark(async () => {
  for (const concurrency of CONCURRENCIES) await measure(concurrency);
});
