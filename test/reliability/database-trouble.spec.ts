import { checkInvariants, describeViolations } from './support/invariants';
import { sleep, waitUntil } from './support/wait';
import { ReliabilityHarness } from './support/reliability-harness';
import { between, report } from './support/report';
import { transportLabel } from './support/reliability-transport';

const COUNTS = { ReliabilityChain: 40, ReliabilitySignal: 10, ReliabilityResumable: 10 };
const ITEMS = 10;
const TERMINATIONS = 12;

/**
 * Issue #9, 4: database trouble. First the workers' PostgreSQL connections are terminated
 * (pg_terminate_backend) again and again mid-run, inside their transactions; then, with a fresh
 * batch, the whole PostgreSQL server crashes (`pg_ctl stop -m immediate`) and comes back 1.5 s
 * later, mid-run and then once more with the workers idle. The workers stay up and reconnect; an
 * interrupted transaction leaves nothing half-written (the invariants find no execution without
 * its workflow's matching transition); housekeeping (short thresholds) finishes what the
 * interruptions left, and every run completes. On the PostgreSQL transport the queue is in the
 * same server: the terminations cut the workers' BullMQ connections too, and the crash takes the
 * jobs down with the state.
 */
describe(`fault injection: database trouble (terminated backends, server restart) ${transportLabel}`, () => {
  let harness: ReliabilityHarness;
  const lines: string[] = [];
  const workerErrors = () =>
    [...harness.pool.workers.values()].reduce(
      (sum, worker) => sum + worker.output.filter((line) => /error/i.test(line)).length,
      0,
    );

  beforeAll(async () => {
    harness = await ReliabilityHarness.boot({
      concurrency: 4,
      settings: { stepMs: 60, items: ITEMS, itemMs: 30 },
      housekeeping: { stuckInProgressThreshold: '5s', stuckScheduledThreshold: '2s' },
    });
    await Promise.all(['w1', 'w2'].map((name) => harness.pool.start(name)));
  });

  afterAll(async () => {
    if (harness) {
      report(`database trouble (terminated backends, server restart) ${transportLabel}`, [
        ...lines,
        'actions:',
        ...harness.pool.actions,
      ]);
    }
    await harness?.close();
  });

  async function startBatch(label: string): Promise<string[]> {
    const ids = await harness.startWorkflows(COUNTS);
    await Promise.all(
      ids
        .get('ReliabilitySignal')!
        .map((id) => harness.service.signal(id, 'go', { idempotencyKey: `go-${id}` })),
    );
    const all = [...ids.values()].flat();
    harness.pool.log(`${label}: started ${all.length} workflows and sent their signals`);
    return all;
  }

  async function settle(label: string, all: string[]) {
    const housekeeping = await harness.housekeepUntil(() => harness.allFinished(all), {
      everyMs: 1_000,
      timeoutMs: 60_000,
    });
    harness.pool.log(
      `${label}: ${housekeeping.runs} housekeeping run(s) over ${housekeeping.ms} ms: ${JSON.stringify(housekeeping.totals)}; ${JSON.stringify(await harness.stateCounts())}`,
    );
    const invariants = await checkInvariants(harness.dataSource, {
      workflowIds: all,
      // The retry of a step whose commit was cut off is visible as a 'recovered' execution.
      retryExplained: (row) => harness.pool.pids().includes(row.pid),
      retryReason: "the first attempt's transaction was cut off by the fault",
      items: ITEMS,
    });
    lines.push(`${label} invariants:`, ...invariants.lines.map((line) => `  ${line}`));
    return invariants;
  }

  it('workers survive their connections being terminated mid-transaction, and every workflow completes', async () => {
    const exitsBefore = harness.pool.unexpectedExits.length;
    const all = await startBatch('terminations');
    let terminated = 0;
    for (let round = 1; round <= TERMINATIONS; round++) {
      await sleep(between(150, 350));
      // The workers' TypeORM pools and, on the PostgreSQL transport, their BullMQ pools
      // (reliability-w…-queue) and LISTEN sessions (BullMQ names those after the queue; only
      // workers hold one).
      const rows = await harness.dataSource.query<
        Array<{ ok: boolean; state: string; application_name: string }>
      >(
        `SELECT pg_terminate_backend(pid) AS ok, state, application_name FROM pg_stat_activity
         WHERE (application_name LIKE 'reliability-w%' OR application_name = 'geneva-drive')
           AND pid <> pg_backend_pid()`,
      );
      terminated += rows.length;
      const byName = new Map<string, number>();
      for (const row of rows)
        byName.set(row.application_name, (byName.get(row.application_name) ?? 0) + 1);
      harness.pool.log(
        `round ${round}: terminated ${rows.length} worker connection(s) (${rows.filter((row) => row.state?.startsWith('idle in transaction') || row.state === 'active').length} inside a transaction or query; ` +
          `${[...byName].map(([name, count]) => `${name} ${count}`).join(', ')})`,
      );
    }
    lines.push(
      `terminations: ${terminated} worker connections terminated over ${TERMINATIONS} rounds`,
    );
    const invariants = await settle('terminations', all);
    const exits = harness.pool.unexpectedExits.slice(exitsBefore);
    lines.push(
      `worker log lines mentioning errors so far: ${workerErrors()}; unexpected worker exits: ${exits.length}`,
    );
    expect(describeViolations(invariants)).toBe('no violations');
    expect(exits.map(({ name, pid, code }) => ({ name, pid, code }))).toEqual([]);
  });

  it('workers reconnect after PostgreSQL restarts mid-run, and every workflow completes', async () => {
    const exitsBefore = harness.pool.unexpectedExits.length;
    const all = await startBatch('restart');
    await waitUntil(
      'some progress before the restart',
      async () => {
        const [{ count }] = await harness.dataSource.query<Array<{ count: number }>>(
          `SELECT COUNT(*)::int AS count FROM geneva_drive_step_executions WHERE workflow_id = ANY($1) AND outcome = 'success'`,
          [all],
        );
        return count >= all.length;
      },
      60_000,
      50,
    );
    const downAt = Date.now();
    await harness.postgres.restart(1_500);
    const upAt = Date.now();
    harness.pool.log(`PostgreSQL crashed (immediate stop) and restarted after ${upAt - downAt} ms`);
    // The control app's own pool reconnects too.
    await waitUntil('the control app to reconnect', async () => {
      await harness.dataSource.query('SELECT 1');
      return true;
    });
    const invariants = await settle('restart', all);
    const exits = harness.pool.unexpectedExits.slice(exitsBefore);
    lines.push(
      `worker log lines mentioning errors: ${workerErrors()}; unexpected worker exits: ${exits.length}`,
    );
    expect(describeViolations(invariants)).toBe('no violations');
    expect(exits.map(({ name, pid, code }) => ({ name, pid, code }))).toEqual([]);
  });

  // On the PostgreSQL transport an idle worker's fetch fails to connect while the server is down;
  // with BullMQ's default retry delay it took new jobs only ~13 s after a 1.5 s restart.
  it('idle workers take new jobs within 5 s of PostgreSQL coming back, without housekeeping', async () => {
    const downAt = Date.now();
    await harness.postgres.restart(1_500);
    const upAt = Date.now();
    harness.pool.log(
      `idle: PostgreSQL crashed and restarted after ${upAt - downAt} ms, no work in flight`,
    );
    await waitUntil('the control app to reconnect', async () => {
      await harness.dataSource.query('SELECT 1');
      return true;
    });
    const all = [...(await harness.startWorkflows({ ReliabilityChain: 10 })).values()].flat();
    await waitUntil('the new workflows to finish', () => harness.allFinished(all), 60_000, 50);
    const ms = Date.now() - upAt;
    harness.pool.log(`idle: ${all.length} workflows started after the restart finished`);
    const invariants = await checkInvariants(harness.dataSource, {
      workflowIds: all,
      retryExplained: () => false,
      retryReason: 'none allowed (started after the restart)',
      items: ITEMS,
      noRecovery: true,
    });
    lines.push(
      `idle restart: ${all.length} workflows started once PostgreSQL was back finished ${ms} ms after it came back (no housekeeping)`,
      ...invariants.lines.map((line) => `  ${line}`),
    );
    expect(describeViolations(invariants)).toBe('no violations');
    expect(ms).toBeLessThan(5_000);
  });
});
