import { checkInvariants, describeViolations } from './support/invariants';
import type { PrivateRedisCluster } from './support/private-redis-cluster';
import { waitUntil } from './support/wait';
import { ReliabilityHarness } from './support/reliability-harness';
import { report } from './support/report';
import { describeOnRedis } from './support/reliability-transport';

const COUNTS = { ReliabilityChain: 40, ReliabilitySignal: 10, ReliabilityResumable: 10 };
const ITEMS = 10;

/**
 * Redis Cluster failover. The scenario runs on a Redis Cluster of its own (three masters with a
 * replica each, loopback ports, 2 s node timeout); every app connects through an ioredis Cluster
 * with a hash-tagged prefix. Mid-run, the master that serves the prefix's hash slot (every key of
 * the queue) is SIGKILLed; its replica takes over with whatever it had replicated (replication is
 * asynchronous: the last jobs written may be gone). The stuck thresholds stay at their defaults,
 * so what the failover lost comes back through reconciliation only. Every workflow must finish,
 * and no step body may run twice (no worker died, so no retry is explained).
 */
// About Redis itself: skipped on the PostgreSQL transport.
describeOnRedis()(
  'fault injection: Redis Cluster, the queue slot’s master SIGKILLed (failover)',
  () => {
    let harness: ReliabilityHarness<PrivateRedisCluster>;

    beforeAll(async () => {
      harness = await ReliabilityHarness.bootOnCluster({
        concurrency: 4,
        settings: { stepMs: 60, items: ITEMS, itemMs: 30 },
        housekeeping: { stuckInProgressThreshold: '1h', stuckScheduledThreshold: '15m' },
      });
    });

    // Printed even when the test fails: what was done, and what was checked.
    const lines: string[] = [];
    afterAll(async () => {
      if (harness)
        report('Redis Cluster failover', [...lines, 'actions:', ...harness.pool.actions]);
      await harness?.close();
    });

    it('after the failover every workflow finishes, lost jobs re-enqueued by reconciliation, no body run twice', async () => {
      const startedAt = Date.now();
      await Promise.all(['w1', 'w2'].map((name) => harness.pool.start(name)));
      const ids = await harness.startWorkflows(COUNTS);
      const all = [...ids.values()].flat();
      await Promise.all(
        ids
          .get('ReliabilitySignal')!
          .map((id) => harness.service.signal(id, 'go', { idempotencyKey: `go-${id}` })),
      );
      harness.pool.log(`started ${all.length} workflows and sent their signals`);
      await waitUntil(
        'a third of the work',
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
        `SELECT COUNT(*)::int AS pending FROM geneva_drive_step_executions WHERE workflow_id = ANY($1) AND state IN ('scheduled', 'in_progress')`,
        [all],
      );
      const master = await harness.redis.masterOf(harness.target.prefix);
      const killedAt = Date.now();
      await harness.redis.kill(master);
      harness.pool.log(
        `SIGKILL the master on port ${master} (the queue's slot), ${pending} execution(s) pending`,
      );
      const promoted = await harness.redis.untilFailedOver(harness.target.prefix, master);
      const failoverMs = Date.now() - killedAt;
      harness.pool.log(`failed over to port ${promoted} after ${failoverMs} ms`);

      const housekeeping = await harness.housekeepUntil(() => harness.allFinished(all), {
        everyMs: 1_000,
        timeoutMs: 90_000,
      });
      const recoveryMs = Date.now() - killedAt;
      const [{ reenqueued }] = await harness.dataSource.query<Array<{ reenqueued: number }>>(
        `SELECT COUNT(*)::int AS reenqueued FROM geneva_drive_step_executions WHERE workflow_id = ANY($1) AND job_id <> id::text`,
        [all],
      );
      const invariants = await checkInvariants(harness.dataSource, {
        workflowIds: all,
        retryExplained: () => false,
        retryReason: 'none allowed (no worker died)',
        items: ITEMS,
        noRecovery: true,
      });
      lines.push(
        `2 workers × concurrency 4; ${all.length} workflows; total ${Date.now() - startedAt} ms`,
        `master ${master} SIGKILLed with ${pending} execution(s) pending; replica ${promoted} promoted after ${failoverMs} ms`,
        `all finished ${recoveryMs} ms after the kill, ${housekeeping.runs} housekeeping run(s): ${JSON.stringify(housekeeping.totals)}; ${reenqueued} execution(s) carry a re-enqueued job id`,
        `errors reported by the control app: ${harness.reported.length}`,
        'invariants:',
        ...invariants.lines,
      );
      expect(describeViolations(invariants)).toBe('no violations');
      expect(pending).toBeGreaterThan(0);
      expect(promoted).not.toBe(master);
      expect(recoveryMs).toBeLessThan(60_000);
      expect(housekeeping.totals.stuckScheduledRecovered).toBe(0);
      expect(housekeeping.totals.stuckInProgressRecovered).toBe(0);
      expect(harness.pool.unexpectedExits).toEqual([]);
    });
  },
);
