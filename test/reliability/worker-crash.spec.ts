import { checkInvariants, describeViolations } from './support/invariants';
import { sleep } from './support/wait';
import { ReliabilityHarness } from './support/reliability-harness';
import { between, report } from './support/report';
import { reliabilityTransport, transportLabel } from './support/reliability-transport';

const WORKERS = ['w1', 'w2', 'w3'];
// The PostgreSQL-transport run is a short CI stage of its own: half the workflows, 8 kills.
const onPostgres = reliabilityTransport === 'postgres';
const KILLS = onPostgres ? 8 : 12;
const COUNTS = onPostgres
  ? { ReliabilityChain: 60, ReliabilitySignal: 20, ReliabilityResumable: 20 }
  : { ReliabilityChain: 120, ReliabilitySignal: 40, ReliabilityResumable: 40 };
const ITEMS = 10;

/**
 * Issue #9, 1: worker crashes. 200 workflows × 5 steps (a fifth wait for a signal, a fifth walk a
 * resumable step; 100 on the PostgreSQL transport) run on three worker processes; one of them is
 * SIGKILLed at a random moment, again and again, and restarted each time, while signals arrive
 * (some twice, concurrently, with the same idempotency key). Then housekeeping runs with short
 * thresholds until everything has finished, and the invariants are checked. On the PostgreSQL
 * transport a killed worker's active jobs are rows of BullMQ's tables whose lock nobody renews.
 */
describe(`fault injection: worker crashes (SIGKILL) ${transportLabel}`, () => {
  let harness: ReliabilityHarness;

  beforeAll(async () => {
    harness = await ReliabilityHarness.boot({
      concurrency: 4,
      settings: { stepMs: 80, items: ITEMS, itemMs: 40 },
      housekeeping: { stuckInProgressThreshold: '5s', stuckScheduledThreshold: '2s' },
    });
  });

  // Printed even when the test fails: what was done, and what was checked.
  const lines: string[] = [];
  afterAll(async () => {
    if (harness)
      report(`worker crashes (SIGKILL) ${transportLabel}`, [
        ...lines,
        'actions:',
        ...harness.pool.actions,
      ]);
    await harness?.close();
  });

  it('every workflow finishes, no step runs twice unless its worker died mid-step, no signal is lost', async () => {
    const startedAt = Date.now();
    await Promise.all(WORKERS.map((name) => harness.pool.start(name)));
    const ids = await harness.startWorkflows(COUNTS);
    const all = [...ids.values()].flat();
    harness.pool.log(`started ${all.length} workflows (${JSON.stringify(COUNTS)})`);

    // Signals: each signal workflow gets 'go' once or twice (concurrently, same key) at a random moment.
    let duplicates = 0;
    const signalIds = ids.get('ReliabilitySignal')!;
    const signals = Promise.all(
      signalIds.map(async (id) => {
        await sleep(between(0, 8_000));
        const copies = Math.random() < 0.3 ? 2 : 1;
        if (copies === 2) duplicates += 1;
        await Promise.all(
          Array.from({ length: copies }, () =>
            harness.service.signal(id, 'go', { idempotencyKey: `go-${id}` }),
          ),
        );
      }),
    );

    // Chaos: SIGKILL a random live worker every 0.3–0.9 s and restart it in the background.
    const restarts: Array<Promise<unknown>> = [];
    let inFlightAtKills = 0;
    for (let kill = 1; kill <= KILLS; kill++) {
      await sleep(between(300, 900));
      // Only booted workers: at least one keeps working while the others restart.
      const alive = WORKERS.filter((name) => harness.pool.workers.get(name)?.ready);
      if (alive.length <= 1) {
        await Promise.all(restarts);
        kill -= 1;
        continue;
      }
      const victim = alive[between(0, alive.length - 1)];
      const [{ count }] = await harness.dataSource.query<Array<{ count: number }>>(
        `SELECT COUNT(*)::int AS count FROM geneva_drive_step_executions WHERE state = 'in_progress'`,
      );
      inFlightAtKills += count;
      harness.pool.log(`kill #${kill}: ${count} execution(s) in progress cluster-wide`);
      await harness.pool.kill(victim);
      restarts.push(harness.pool.start(victim));
    }
    await Promise.all(restarts);
    await signals;
    const chaosMs = Date.now() - startedAt;
    harness.pool.log(`chaos over: ${KILLS} kills; ${JSON.stringify(await harness.stateCounts())}`);

    const housekeeping = await harness.housekeepUntil(() => harness.allFinished(all), {
      everyMs: 1_000,
      timeoutMs: 120_000,
    });
    harness.pool.log(
      `housekeeping: ${housekeeping.runs} run(s) over ${housekeeping.ms} ms, ${JSON.stringify(housekeeping.totals)}; ${JSON.stringify(await harness.stateCounts())}`,
    );

    const invariants = await checkInvariants(harness.dataSource, {
      workflowIds: all,
      retryExplained: (row) => harness.pool.killedPids.has(row.pid),
      retryReason: 'the worker that ran the first attempt was SIGKILLed',
      items: ITEMS,
    });
    lines.push(
      `${WORKERS.length} workers × concurrency 4; ${KILLS} SIGKILLs with restarts (${inFlightAtKills} executions were in progress at the kills, summed); ${duplicates} signals sent twice concurrently`,
      `chaos phase ${chaosMs} ms; total ${Date.now() - startedAt} ms`,
      'invariants:',
      ...invariants.lines,
      `unexpected worker exits: ${harness.pool.unexpectedExits.length}`,
    );
    expect(describeViolations(invariants)).toBe('no violations');
    expect(harness.pool.unexpectedExits).toEqual([]);
    expect(housekeeping.totals.stuckInProgressRecovered).toBeGreaterThan(0);
  });
});
