import { ReliabilityHarness } from './support/reliability-harness';
import { runOverload, type OverloadReport } from './support/overload-run';
import { report } from './support/report';
import { describeOnRedis } from './support/reliability-transport';

const WORKER = 'w1';

/**
 * Overload: the engine held above its capacity, then left to drain. One worker process
 * (concurrency 4) runs five-step chains whose bodies wait ~100 ms (as steps calling another
 * service do), so capacity is ~4 steps per 100 ms. Why this is robust on a loaded 2-core machine:
 * a capacity set by waiting bodies barely moves when other processes take the CPU (the engine's
 * own ~10 ms per step is all that stretches), and it leaves this process the CPU to start
 * workflows at 3x (with CPU-bound bodies the starter and the worker share two cores and 3x cannot
 * be offered at all). Capacity is the steps/s of draining a pre-started backlog (sized by a first,
 * warm-up drain to take ~6 s), before the window and again after the drain; the drain is compared
 * with the lower of the two, both measured the same way (a full queue emptied by the same worker,
 * nothing else starting), and ~6 s and ~30 s windows average out short bursts. The window is 15 s at 3x: ~30 s of backlog, older than the 5 s
 * stuck-scheduled threshold, with housekeeping every 10 s, so each run meets jobs that are
 * overdue and still queued. The whole scenario takes ~90 s.
 */
// It bounds Redis' key count (DBSIZE): skipped on the PostgreSQL transport.
describeOnRedis()('overload: 3x capacity for 15 s, then drain', () => {
  let harness: ReliabilityHarness;
  let result: OverloadReport | null = null;
  const lines: string[] = [];

  beforeAll(async () => {
    harness = await ReliabilityHarness.boot({
      concurrency: 4,
      settings: { stepMs: 100 },
      housekeeping: { stuckScheduledThreshold: '5s', stuckInProgressThreshold: '2m' },
    });
    await harness.pool.start(WORKER);
  });

  afterAll(async () => {
    if (harness) {
      const { samples, ...summary } = result ?? { samples: [] };
      report('overload (3x capacity, then drain)', [
        ...lines,
        JSON.stringify(summary),
        ...samples.map((s) => JSON.stringify(s)),
        ...harness.pool.actions,
      ]);
    }
    await harness?.close();
  });

  it('runs no body twice, adds no job while jobs exist, stays bounded, and drains at capacity', async () => {
    result = await runOverload(
      harness,
      {
        worker: WORKER,
        workflow: 'ReliabilityChain',
        stepsPerWorkflow: 5,
        capacityMs: 6_000,
        factor: 3,
        windowMs: 15_000,
        housekeepingEveryMs: 10_000,
        drainTimeoutMs: 150_000,
      },
      (line) => lines.push(line),
    );
    const r = result;
    // It was an overload, and the backlog grew older than the stuck-scheduled threshold.
    expect(r.offered.ratioToCapacity).toBeGreaterThanOrEqual(2);
    expect(r.latencyMs.duringDrain.p99).toBeGreaterThan(5_000);
    expect(r.housekeeping.runs).toBeGreaterThanOrEqual(2);

    expect(r.duplicateBodies).toBe(0);
    expect(r.housekeepingJobs).toBe(0);
    expect(r.housekeeping.totals.stuckScheduledRecovered).toBe(0);
    expect(harness.pool.unexpectedExits).toEqual([]);

    // Redis holds about one key per job, queued or retained (removeOnComplete), and no more.
    for (const s of r.samples) {
      expect(s.redisKeys).toBeLessThanOrEqual(
        r.redisKeys.baseline + 100 + 2 * (s.backlog + s.retained),
      );
    }
    // The backlog lives in Redis and PostgreSQL, not in the worker.
    expect(r.workerRssMb.peak).toBeLessThanOrEqual(r.workerRssMb.baseline + 100);

    expect(r.drain.ratioToCapacity).toBeGreaterThanOrEqual(0.9);
  });
});
