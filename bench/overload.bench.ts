/**
 * `npm run bench:overload`: the engine held at 3x its capacity, then left to drain (the long
 * version of test/reliability/overload.spec.ts, on the same harness: a private PostgreSQL and
 * Redis, one worker process). Capacity is the steps/s of one worker (concurrency
 * BENCH_OVERLOAD_CONCURRENCY, default 4) draining a pre-started backlog of five-step chains whose
 * bodies wait ~BENCH_OVERLOAD_STEP_MS (default 100) ms; workflows are then started at 3x that for
 * BENCH_OVERLOAD_WINDOW_S (default 60) s with housekeeping every 10 s (stuckScheduledThreshold
 * 5s), and drained. One JSON line: peak backlog, Redis keys and worker RSS, duplicate bodies and
 * housekeeping jobs (both must be 0), step latency during and after, drain rate against capacity;
 * the samples (backlog, keys, RSS per second) under `details`. Exits 1 when a body ran twice or
 * housekeeping added a job.
 */
import { ReliabilityHarness } from '../test/reliability/support/reliability-harness';
import { runOverload } from '../test/reliability/support/overload-run';
import { envInteger } from './support/env';
import { runBenchmark } from './support/main';
import { emit } from './support/result';

const WINDOW_S = envInteger('BENCH_OVERLOAD_WINDOW_S', 60);
const CONCURRENCY = envInteger('BENCH_OVERLOAD_CONCURRENCY', 4);
const STEP_MS = envInteger('BENCH_OVERLOAD_STEP_MS', 100);

runBenchmark(async () => {
  const harness = await ReliabilityHarness.boot({
    concurrency: CONCURRENCY,
    settings: { stepMs: STEP_MS },
    housekeeping: { stuckScheduledThreshold: '5s', stuckInProgressThreshold: '5m' },
  });
  try {
    await harness.pool.start('w1');
    const report = await runOverload(
      harness,
      {
        worker: 'w1',
        workflow: 'ReliabilityChain',
        stepsPerWorkflow: 5,
        capacityMs: 10_000,
        factor: 3,
        windowMs: WINDOW_S * 1000,
        housekeepingEveryMs: 10_000,
        drainTimeoutMs: WINDOW_S * 10_000,
      },
      (line) => process.stderr.write(`${line}\n`),
    );
    const { samples, ...summary } = report;
    await emit(
      'overload',
      { windowSeconds: WINDOW_S, concurrency: CONCURRENCY, stepMs: STEP_MS, factor: 3 },
      [
        {
          capacityStepsPerSecond: report.capacity.stepsPerSecond,
          capacityBeforeStepsPerSecond: report.capacity.before.stepsPerSecond,
          capacityAfterStepsPerSecond: report.capacity.after.stepsPerSecond,
          offeredStepsPerSecond: report.offered.stepsPerSecond,
          offeredRatio: report.offered.ratioToCapacity,
          peakBacklogJobs: report.peakBacklog,
          redisKeysBaseline: report.redisKeys.baseline,
          redisKeysPeak: report.redisKeys.peak,
          redisKeysPerBacklogJob: report.redisKeys.peakPerBacklogJob,
          workerRssBaselineMb: report.workerRssMb.baseline,
          workerRssPeakMb: report.workerRssMb.peak,
          duplicateBodies: report.duplicateBodies,
          housekeepingJobs: report.housekeepingJobs,
          housekeepingRuns: report.housekeeping.runs,
          housekeepingMaxRunMs: report.housekeeping.maxRunMs,
          latencyOverloadP50Ms: report.latencyMs.duringOverload.p50,
          latencyOverloadP99Ms: report.latencyMs.duringOverload.p99,
          latencyDrainP50Ms: report.latencyMs.duringDrain.p50,
          latencyDrainP99Ms: report.latencyMs.duringDrain.p99,
          latencyAfterP50Ms: report.latencyMs.afterDrain.p50,
          latencyAfterP99Ms: report.latencyMs.afterDrain.p99,
          drainStepsPerSecond: report.drain.stepsPerSecond,
          drainRatio: report.drain.ratioToCapacity,
          drainSeconds: report.drain.ms / 1000,
        },
      ],
      { summary, samples },
    );
    return report.duplicateBodies === 0 && report.housekeepingJobs === 0;
  } finally {
    await harness.close();
  }
});
