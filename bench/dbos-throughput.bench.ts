/**
 * `npm run bench:dbos-throughput`: DBOS Transact's counterpart of `bench:throughput`, run by
 * `npm run bench` right after it: BENCH_WORKFLOWS workflows (default 200) of BENCH_STEPS trivial
 * in-process steps (default 10) at each concurrency of BENCH_CONCURRENCY (default 8,32), on DBOS's
 * system database (bench/support/dbos.ts). One JSON line per concurrency: steps/s, step-to-step
 * gap p50/p99, CPU per step, medians over BENCH_RUNS runs (default 3). The summary sets the
 * engine's throughput beside it (issue #21: ours ≥ 1.5 × DBOS's).
 */
import { launchDbos } from './support/dbos';
import { benchPoolSize } from './support/engine';
import { runDbosChains } from './support/dbos-chains';
import { dbosChainWorkflow } from './support/dbos.workflows';
import { envInteger, envIntegers, runCount, warmUpRuns } from './support/env';
import { runBenchmark } from './support/main';
import { emit, repeatRuns } from './support/result';
import { StepTimeline } from './support/step-timeline';

const WORKFLOWS = envInteger('BENCH_WORKFLOWS', 200);
const STEPS = envInteger('BENCH_STEPS', 10);
const CONCURRENCIES = envIntegers('BENCH_CONCURRENCY', [8, 32]);
const timeline = new StepTimeline();
const chainWorkflow = dbosChainWorkflow('DbosThroughputBenchWorkflow', STEPS, timeline);

runBenchmark(async () => {
  // DBOS takes its configuration once per process: the pool is sized for the largest concurrency.
  const dbos = await launchDbos({ poolSize: benchPoolSize(Math.max(...CONCURRENCIES)) });
  try {
    for (const concurrency of CONCURRENCIES) {
      const run = () =>
        runDbosChains({
          dbos,
          workflow: chainWorkflow,
          workflows: WORKFLOWS,
          steps: STEPS,
          concurrency,
          timeline,
        });
      // Unmeasured runs of the same size first, as many as the engine's.
      for (let round = 0; round < warmUpRuns(WORKFLOWS * STEPS); round++) await run();
      const runs = await repeatRuns(runCount(), run);
      await emit('dbos-throughput', { workflows: WORKFLOWS, steps: STEPS, concurrency }, runs);
    }
  } finally {
    await dbos.close();
  }
});
