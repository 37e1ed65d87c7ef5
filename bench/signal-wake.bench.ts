/**
 * `npm run bench:signal-wake`: latency from `WorkflowService.signal()` to the woken step's body,
 * on a real app (PostgreSQL + BullMQ worker, fresh schema and queue prefix). Each run parks
 * BENCH_WAKEUPS workflows (default 500) at a `waitFor` step, then signals them one at a time,
 * each after the previous one finished (unloaded). One JSON line: p50/p95/p99 in ms measured from
 * the `signal()` call and from its return (the body may start before `signal()` resolves: the job
 * is enqueued right after commit, so the second figure can be negative), and of the `signal()`
 * call itself and of its time spent waiting on PostgreSQL (`callDatabaseP50Ms`: what no client of
 * the same message can go below), medians over BENCH_RUNS runs (default 3).
 * `bench:dbos-signal-wake` measures DBOS Transact's `send()` → `recv()` the same way, right after
 * this one in `npm run bench`.
 */
import { performance } from 'node:perf_hooks';
import type { EngineHarness } from '../test/e2e/support/engine-harness';
import { parkedWorkflow } from './support/bench.workflows';
import { createOrders } from './support/dataset';
import { bootEngine, DEFAULT_CONCURRENCY } from './support/engine';
import { envInteger, runCount } from './support/env';
import { FinishLine } from './support/finish-line';
import { runBenchmark } from './support/main';
import { mapInParallel } from './support/parallel';
import { waitForParked } from './support/parked';
import { emit, repeatRuns } from './support/result';
import { RoundTripMeter } from './support/round-trip-meter';
import { WakeTimings } from './support/wake-timings';

const WAKEUPS = envInteger('BENCH_WAKEUPS', 500);
const roundTrips = RoundTripMeter.install();
/** Resolves the woken body's start time, by workflow id. */
const wakes = new Map<string, (startedAt: number) => void>();
const WakeBenchWorkflow = parkedWorkflow('WakeBenchWorkflow', (id) =>
  wakes.get(id)?.(performance.now()),
);

/**
 * Parks `count` workflows, then wakes them one at a time, each after the previous one finished;
 * resolves the latencies from each `signal()` call and return to the woken body's start, and the
 * `signal()` call times.
 */
async function wakeRound(harness: EngineHarness, finishLine: FinishLine, count: number) {
  const heroes = await createOrders(harness.dataSource, count);
  const workflows = await mapInParallel(heroes, 20, (hero) =>
    harness.service.start(WakeBenchWorkflow, { hero }),
  );
  await waitForParked(harness, count);
  const timings = new WakeTimings(roundTrips);
  for (const { id } of workflows) {
    const bodyStarted = new Promise<number>((resolve) => wakes.set(id, resolve));
    const finished = finishLine.expect([id]);
    await timings.measure(() => harness.service.signal(id, 'go'), bodyStarted);
    await finished;
    wakes.delete(id);
  }
  return timings.metrics();
}

runBenchmark(async () => {
  const harness = await bootEngine({ workflows: [WakeBenchWorkflow] });
  const finishLine = new FinishLine();
  const unwatch = finishLine.watchEngine();
  try {
    // Unmeasured, a round of the measured size: JIT warm-up and first connections stay out.
    await wakeRound(harness, finishLine, WAKEUPS);
    const runs = await repeatRuns(runCount(), () => wakeRound(harness, finishLine, WAKEUPS));
    await emit('signal-wake', { wakeups: WAKEUPS, concurrency: DEFAULT_CONCURRENCY }, runs);
  } finally {
    unwatch();
    await harness.close();
  }
});
