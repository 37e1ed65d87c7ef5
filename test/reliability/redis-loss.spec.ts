import { checkInvariants, describeViolations } from './support/invariants';
import { waitUntil } from './support/wait';
import { ReliabilityHarness } from './support/reliability-harness';
import { report } from './support/report';
import { describeOnRedis } from './support/reliability-transport';

const COUNTS = { ReliabilityChain: 40, ReliabilitySignal: 10, ReliabilityResumable: 10 };
const ITEMS = 10;

/**
 * Issue #9, 3: Redis loss. Mid-run, the scenario's Redis loses every job: first FLUSHALL, then,
 * in a second round, the server is SIGKILLed and restarted empty. The stuck-scheduled threshold
 * stays at its default (15 minutes), so only reconciliation (housekeeping compares `scheduled`
 * executions with BullMQ's jobs and re-enqueues the missing ones) can recover the lost work; the
 * workers reconnect by themselves. Every workflow must finish within a minute of the loss.
 */
// About Redis itself: skipped on the PostgreSQL transport (database-trouble covers its queue).
describeOnRedis()('fault injection: Redis loss (FLUSHALL, restart)', () => {
  let harness: ReliabilityHarness;

  beforeAll(async () => {
    harness = await ReliabilityHarness.boot({
      concurrency: 4,
      settings: { stepMs: 60, items: ITEMS, itemMs: 30 },
      // Defaults on purpose: recovery must not wait for the stuck thresholds.
      housekeeping: { stuckInProgressThreshold: '1h', stuckScheduledThreshold: '15m' },
    });
  });

  // Printed even when the test fails: what was done, and what was checked.
  const lines: string[] = [];
  afterAll(async () => {
    if (harness)
      report('Redis loss (FLUSHALL, restart)', [...lines, 'actions:', ...harness.pool.actions]);
    await harness?.close();
  });

  /** Runs one round: start workflows, lose Redis mid-run, housekeep until all have finished. */
  async function round(label: string, lose: () => Promise<void>) {
    const ids = await harness.startWorkflows(COUNTS);
    const all = [...ids.values()].flat();
    await Promise.all(
      ids
        .get('ReliabilitySignal')!
        .map((id) => harness.service.signal(id, 'go', { idempotencyKey: `go-${id}` })),
    );
    harness.pool.log(`${label}: started ${all.length} workflows and sent their signals`);
    // Lose Redis once about a third of the step executions have succeeded.
    await waitUntil(
      `a third of the work of ${label}`,
      async () => {
        const [{ count }] = await harness.dataSource.query<Array<{ count: number }>>(
          `SELECT COUNT(*)::int AS count FROM geneva_drive_step_executions WHERE workflow_id = ANY($1) AND outcome = 'success'`,
          [all],
        );
        return count >= all.length * 5 * 0.3;
      },
      60_000,
      50,
    );
    const [{ pending }] = await harness.dataSource.query<Array<{ pending: number }>>(
      `SELECT COUNT(*)::int AS pending FROM geneva_drive_step_executions WHERE workflow_id = ANY($1) AND state = 'scheduled'`,
      [all],
    );
    const lostAt = Date.now();
    await lose();
    harness.pool.log(`${label}: Redis lost with ${pending} scheduled execution(s) queued`);
    const housekeeping = await harness.housekeepUntil(() => harness.allFinished(all), {
      everyMs: 1_000,
      timeoutMs: 90_000,
    });
    const recoveryMs = Date.now() - lostAt;
    const [{ reenqueued }] = await harness.dataSource.query<Array<{ reenqueued: number }>>(
      `SELECT COUNT(*)::int AS reenqueued FROM geneva_drive_step_executions WHERE workflow_id = ANY($1) AND job_id <> id::text`,
      [all],
    );
    harness.pool.log(
      `${label}: all ${all.length} finished ${recoveryMs} ms after the loss, ${housekeeping.runs} housekeeping run(s): ${JSON.stringify(housekeeping.totals)}; ${reenqueued} execution(s) carry a re-enqueued job id`,
    );
    return { all, recoveryMs, housekeeping, pending };
  }

  it('reconciliation re-enqueues every lost job and all workflows finish within a minute, without the 15-minute threshold', async () => {
    const startedAt = Date.now();
    await Promise.all(['w1', 'w2'].map((name) => harness.pool.start(name)));
    const flushed = await round('round 1 (FLUSHALL)', () => harness.redis.flushAll());
    const restarted = await round('round 2 (Redis SIGKILLed, back empty after 1 s)', () =>
      harness.redis.restart(1_000),
    );

    const ids = [...flushed.all, ...restarted.all];
    const invariants = await checkInvariants(harness.dataSource, {
      workflowIds: ids,
      retryExplained: () => false,
      retryReason: 'none allowed (no worker died)',
      items: ITEMS,
      noRecovery: true,
    });
    lines.push(
      `2 workers × concurrency 4; 2 rounds of ${flushed.all.length} workflows; total ${Date.now() - startedAt} ms`,
      `recovery: ${flushed.recoveryMs} ms after FLUSHALL, ${restarted.recoveryMs} ms after the restart (stuckScheduledThreshold 15m)`,
      `errors reported by the control app: ${harness.reported.length}`,
      'invariants:',
      ...invariants.lines,
    );
    expect(describeViolations(invariants)).toBe('no violations');
    for (const { recoveryMs, housekeeping, pending } of [flushed, restarted]) {
      expect(pending).toBeGreaterThan(0);
      expect(recoveryMs).toBeLessThan(60_000);
      expect(housekeeping.totals.stuckScheduledRecovered).toBe(0);
      expect(housekeeping.totals.stuckInProgressRecovered).toBe(0);
    }
    expect(harness.pool.unexpectedExits).toEqual([]);
  });
});
