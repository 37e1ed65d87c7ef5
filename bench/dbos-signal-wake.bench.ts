/**
 * `npm run bench:dbos-signal-wake`: DBOS Transact's counterpart of `bench:signal-wake`, run by
 * `npm run bench` right after it. Each run starts BENCH_WAKEUPS workflows (default 500) that wait
 * in `DBOS.recv()`, then sends to them with `DBOS.send()` one at a time, each after the previous
 * workflow finished (unloaded). One JSON line: p50/p95/p99 in ms from the `send()` call and from
 * its return to the first line of the step after `recv()`, and of the `send()` call itself (and
 * its time waiting on PostgreSQL, as `bench:signal-wake` measures ours),
 * medians over BENCH_RUNS runs (default 3). The summary sets the engine's figures beside them
 * (issue #17: wake ≤ 0.8 × DBOS's at p50 and p99, `signal()` call ≤ `send()` call).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DBOS } from '@dbos-inc/dbos-sdk';
import { launchDbos } from './support/dbos';
import { DBOS_WAKE_TOPIC, dbosParkedWorkflow } from './support/dbos.workflows';
import { benchPoolSize, DEFAULT_CONCURRENCY } from './support/engine';
import { envInteger, runCount } from './support/env';
import { runBenchmark } from './support/main';
import { mapInParallel } from './support/parallel';
import { emit, repeatRuns } from './support/result';
import { RoundTripMeter } from './support/round-trip-meter';
import { WakeTimings } from './support/wake-timings';

const WAKEUPS = envInteger('BENCH_WAKEUPS', 500);
const roundTrips = RoundTripMeter.install();
/** Resolves when the workflow reached the line before `recv()`, by workflow id. */
const parks = new Map<string, () => void>();
/** Resolves the woken step's start time, by workflow id. */
const wakes = new Map<string, (startedAt: number) => void>();
const wakeWorkflow = dbosParkedWorkflow(
  'DbosWakeBenchWorkflow',
  (id) => parks.get(id)?.(),
  (id) => wakes.get(id)?.(performance.now()),
);

/**
 * Starts `count` workflows and waits until each has reached the line before its `recv()`, then
 * sends to them in the order they started, one at a time, each after the previous one finished:
 * the last to park is sent to seconds later, long after its `recv()` began to wait (DBOS has no
 * event for that moment). Resolves the latencies from
 * each `send()` call and return to the woken step's start, and the `send()` call times.
 */
async function wakeRound(count: number) {
  const ids = Array.from({ length: count }, () => randomUUID());
  const parked = Promise.all(
    ids.map((id) => new Promise<void>((resolve) => parks.set(id, resolve))),
  );
  const handles = await mapInParallel(ids, 20, (id) =>
    DBOS.startWorkflow(wakeWorkflow, { workflowID: id })(id),
  );
  await parked;
  parks.clear();
  const timings = new WakeTimings(roundTrips);
  for (const [index, id] of ids.entries()) {
    const bodyStarted = new Promise<number>((resolve) => wakes.set(id, resolve));
    await timings.measure(() => DBOS.send(id, 'go', DBOS_WAKE_TOPIC), bodyStarted);
    await handles[index].getResult();
    wakes.delete(id);
  }
  return timings.metrics();
}

runBenchmark(async () => {
  const dbos = await launchDbos({ poolSize: benchPoolSize(DEFAULT_CONCURRENCY) });
  try {
    // Unmeasured, a round of the measured size: JIT warm-up and first connections stay out.
    await wakeRound(WAKEUPS);
    const runs = await repeatRuns(runCount(), () => wakeRound(WAKEUPS));
    await emit('dbos-signal-wake', { wakeups: WAKEUPS }, runs);
  } finally {
    await dbos.close();
  }
});
