/**
 * `npm run bench:dbos-hop`: DBOS Transact's counterpart of `bench:hop`, run by `npm run bench`
 * right after it: one workflow of BENCH_STEPS trivial in-process steps (default 200) on DBOS's
 * system database (bench/support/dbos.ts). One JSON line: ms per step, step-to-step gap p50/p99,
 * CPU per step, medians over BENCH_RUNS runs (default 3). The summary sets the engine's hop
 * beside it (issue #21: ours ≤ 0.5 × DBOS's).
 */
import { benchPoolSize, DEFAULT_CONCURRENCY } from './support/engine';
import { launchDbos } from './support/dbos';
import { runDbosChains } from './support/dbos-chains';
import { dbosChainWorkflow } from './support/dbos.workflows';
import { envInteger, runCount, warmUpRuns } from './support/env';
import { runBenchmark } from './support/main';
import { emit, repeatRuns } from './support/result';
import { StepTimeline } from './support/step-timeline';

const STEPS = envInteger('BENCH_STEPS', 200);
const timeline = new StepTimeline();
const hopWorkflow = dbosChainWorkflow('DbosHopBenchWorkflow', STEPS, timeline);

runBenchmark(async () => {
  const dbos = await launchDbos({ poolSize: benchPoolSize(DEFAULT_CONCURRENCY) });
  try {
    const run = () =>
      runDbosChains({
        dbos,
        workflow: hopWorkflow,
        workflows: 1,
        steps: STEPS,
        concurrency: 1,
        timeline,
      });
    // Unmeasured workflows first, one at a time: JIT warm-up and first connections stay out.
    for (let round = 0; round < warmUpRuns(STEPS); round++) await run();
    const runs = await repeatRuns(runCount(), run);
    await emit('dbos-hop', { workflows: 1, steps: STEPS }, runs);
  } finally {
    await dbos.close();
  }
});
