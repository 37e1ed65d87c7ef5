/**
 * `npm run bench:hop`: the per-step overhead of the engine unloaded: one workflow of BENCH_STEPS
 * trivial steps (default 200) on a real app (PostgreSQL + BullMQ worker, fresh schema and prefix),
 * then the same chain as raw BullMQ jobs (the floor). One JSON line: ms per step, step-to-step gap
 * p50/p99, the floor's figures, medians over BENCH_RUNS runs (default 3). `bench:dbos-hop`
 * measures DBOS Transact's one workflow alone, right after this one in `npm run bench`.
 * Each run also reports the wall time per step spent waiting on PostgreSQL (`databaseMsPerStep`)
 * and times the cheapest commit (`commitRoundTripP50Ms`, the least a durable step can wait).
 */
import { chainWorkflow } from './support/bench.workflows';
import { commitRoundTripP50Ms } from './support/commit-round-trip';
import { createOrders } from './support/dataset';
import { bootEngine, DEFAULT_CONCURRENCY, runWorkflows } from './support/engine';
import { envInteger, runCount, warmUpRuns } from './support/env';
import { FinishLine } from './support/finish-line';
import { runBenchmark } from './support/main';
import { emit, repeatRuns } from './support/result';
import { RoundTripMeter } from './support/round-trip-meter';
import { round } from './support/stats';
import { StepTimeline } from './support/step-timeline';
import { runVersusFloor } from './support/versus-floor';

const STEPS = envInteger('BENCH_STEPS', 200);
const timeline = new StepTimeline();
const roundTrips = RoundTripMeter.install();
const HopWorkflow = chainWorkflow('HopBenchWorkflow', STEPS, timeline);

runBenchmark(async () => {
  const harness = await bootEngine({ workflows: [HopWorkflow] });
  const finishLine = new FinishLine();
  const unwatch = finishLine.watchEngine();
  try {
    // Unmeasured workflows first, one at a time: JIT warm-up and first connections stay out.
    for (let round = 0; round < warmUpRuns(STEPS); round++)
      await runWorkflows(
        harness,
        HopWorkflow,
        await createOrders(harness.dataSource, 1),
        finishLine,
      );
    const runs = await repeatRuns(runCount(), async () => {
      const waitedBefore = roundTrips.waitedMs;
      const metrics = await runVersusFloor({
        harness,
        workflow: HopWorkflow,
        workflows: 1,
        steps: STEPS,
        concurrency: DEFAULT_CONCURRENCY,
        timeline,
        finishLine,
      });
      const waitedMs = roundTrips.waitedMs - waitedBefore;
      const commitMs = await commitRoundTripP50Ms(harness.dataSource);
      return {
        ...metrics,
        databaseMsPerStep: round(waitedMs / STEPS),
        commitRoundTripP50Ms: commitMs,
      };
    });
    await emit('hop', { workflows: 1, steps: STEPS, concurrency: DEFAULT_CONCURRENCY }, runs);
  } finally {
    unwatch();
    await harness.close();
  }
});
