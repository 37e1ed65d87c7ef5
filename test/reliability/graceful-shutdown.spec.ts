import { checkInvariants, describeViolations } from './support/invariants';
import { sleep, waitUntil } from './support/wait';
import { ReliabilityHarness } from './support/reliability-harness';
import { report } from './support/report';
import { transportLabel } from './support/reliability-transport';

/** Started before each SIGTERM, so the stopped worker is always busy. */
const COUNTS = { ReliabilityChain: 20, ReliabilityResumable: 20 };
const ITEMS = 20;

interface InFlight {
  id: string;
  step_name: string;
  /** Journal rows so far (items, for a walk). */
  runs: number;
}

/**
 * Issue #9, 2: graceful shutdown. A worker is SIGTERMed mid-run (twice, one worker after the
 * other, each restarted a moment later as in a rolling deploy): its in-flight plain steps finish
 * and commit before it exits, its resumable steps stop at their next checkpoint (`continued`) and
 * their successors run in another process, and nothing needs housekeeping: every workflow
 * finishes without a single recovery.
 */
describe(`fault injection: graceful shutdown (SIGTERM) ${transportLabel}`, () => {
  let harness: ReliabilityHarness;

  beforeAll(async () => {
    harness = await ReliabilityHarness.boot({
      concurrency: 4,
      settings: { stepMs: 60, items: ITEMS, itemMs: 60 },
      housekeeping: { stuckInProgressThreshold: '10s', stuckScheduledThreshold: '10s' },
    });
  });

  // Printed even when the test fails: what was done, and what was checked.
  const lines: string[] = [];
  afterAll(async () => {
    if (harness)
      report(`graceful shutdown (SIGTERM) ${transportLabel}`, [
        ...lines,
        'actions:',
        ...harness.pool.actions,
      ]);
    await harness?.close();
  });

  /** Executions in progress whose body has written a journal row from `pid`. */
  async function inFlightIn(pid: number): Promise<InFlight[]> {
    return await harness.dataSource.query<InFlight[]>(
      `SELECT e.id, e.step_name, COUNT(*)::int AS runs FROM geneva_drive_step_executions e
       JOIN reliability_journal j ON j.execution_id = e.id
       WHERE e.state = 'in_progress' AND j.pid = $1 GROUP BY e.id, e.step_name`,
      [pid],
    );
  }

  it('in-flight steps commit, resumable steps continue elsewhere, nothing is recovered as stuck', async () => {
    const startedAt = Date.now();
    await Promise.all(['w1', 'w2'].map((name) => harness.pool.start(name)));
    const all: string[] = [];

    for (const name of ['w1', 'w2']) {
      const ids = await harness.startWorkflows(COUNTS);
      all.push(...[...ids.values()].flat());
      harness.pool.log(`started ${JSON.stringify(COUNTS)} workflows`);
      const pid = harness.pool.workers.get(name)!.pid;
      // SIGTERM once the worker is inside at least one plain step and early in a resumable walk
      // (far from its last item, so the walk is interrupted rather than finishing).
      let inFlight: InFlight[] = [];
      await waitUntil(
        `${name} running a plain step and early in a walk`,
        async () => {
          inFlight = await inFlightIn(pid);
          return (
            inFlight.some((e) => e.step_name === 'walk' && e.runs <= ITEMS / 2) &&
            inFlight.some((e) => e.step_name !== 'walk')
          );
        },
        30_000,
        20,
      );
      const exit = await harness.pool.terminate(name);
      expect(exit.stoppedGracefully).toBe(true);
      expect(exit.requested).toBe(true);

      const rows = await harness.dataSource.query<
        Array<{ id: string; step_name: string; state: string; outcome: string }>
      >(
        `SELECT id, step_name, state, outcome FROM geneva_drive_step_executions WHERE id = ANY($1)`,
        [inFlight.map((e) => e.id)],
      );
      const plain = rows.filter((row) => row.step_name !== 'walk');
      const walks = rows.filter((row) => row.step_name === 'walk');
      // Nothing the worker ran is left in progress once it has exited.
      expect(await inFlightIn(pid)).toEqual([]);
      expect(plain.map((row) => `${row.state}/${row.outcome}`)).toEqual(
        plain.map(() => 'completed/success'),
      );
      const continued = walks.filter((row) => row.outcome === 'continued');
      expect(walks.every((row) => row.outcome === 'continued' || row.outcome === 'success')).toBe(
        true,
      );
      expect(continued.length).toBeGreaterThan(0);
      lines.push(
        `${name} (pid ${pid}) SIGTERMed with ${plain.length} plain step(s) and ${walks.length} walk(s) in flight; exited gracefully after ${exit.ms} ms: ` +
          `plain steps ${plain.map((row) => `${row.state}/${row.outcome}`).join(', ')}; walks ${walks.map((row) => `${row.state}/${row.outcome}`).join(', ')}`,
      );
      harness.pool.log(`${name} stopped; restarting it in 1 s (rolling deploy)`);
      await sleep(1_000);
      await harness.pool.start(name);

      // The interrupted walks continue in another process (the other worker or the restarted one).
      const successors = await harness.dataSource.query<
        Array<{ id: string; continues_from_id: string }>
      >(
        `SELECT s.id, s.continues_from_id FROM geneva_drive_step_executions s WHERE s.continues_from_id = ANY($1)`,
        [continued.map((row) => row.id)],
      );
      expect(successors).toHaveLength(continued.length);
      // Each successor runs (a chain may continue further) in a process other than the one that
      // was stopped; one interrupted at its last item has nothing left to run and just succeeds.
      const successorIds = successors.map((row) => row.id);
      await waitUntil(
        'successors of the interrupted walks to run',
        async () => {
          const [{ count }] = await harness.dataSource.query<Array<{ count: number }>>(
            `SELECT COUNT(*)::int AS count FROM geneva_drive_step_executions WHERE id = ANY($1) AND state = 'completed'`,
            [successorIds],
          );
          return count === successorIds.length;
        },
        60_000,
      ).catch(async (error: Error) => {
        const rows = await harness.describeExecutions(successorIds);
        throw new Error(`${error.message}; successors:\n${rows.join('\n')}`);
      });
      const ranBy = await harness.dataSource.query<
        Array<{ execution_id: string; pid: number; items: number }>
      >(
        `SELECT execution_id, pid, COUNT(*)::int AS items FROM reliability_journal WHERE execution_id = ANY($1) GROUP BY execution_id, pid`,
        [successorIds],
      );
      expect(ranBy.filter((row) => row.pid === pid)).toEqual([]);
      lines.push(
        `  ${successors.length} successor walk execution(s) continued from the saved cursor in other processes ` +
          `(${ranBy.reduce((sum, row) => sum + row.items, 0)} remaining item(s) run there, none in the stopped process)`,
      );
    }

    // No housekeeping: every workflow finishes on its own.
    await waitUntil(
      'every workflow to finish without housekeeping',
      () => harness.allFinished(all),
      90_000,
      250,
    );
    harness.pool.log(`all finished: ${JSON.stringify(await harness.stateCounts())}`);
    const housekeeping = await harness.housekeeping.run();

    const invariants = await checkInvariants(harness.dataSource, {
      workflowIds: all,
      retryExplained: () => false,
      retryReason: 'none allowed (no process died)',
      items: ITEMS,
      noRecovery: true,
    });
    lines.unshift(
      `2 workers × concurrency 4; 2 rounds of ${all.length / 2} workflows, each ending in a SIGTERM (one per worker) and a restart 1 s later; total ${Date.now() - startedAt} ms`,
    );
    lines.push(
      `housekeeping afterwards: ${JSON.stringify(housekeeping)}`,
      'invariants:',
      ...invariants.lines,
    );
    expect(describeViolations(invariants)).toBe('no violations');
    expect(housekeeping.stuckInProgressRecovered + housekeeping.stuckScheduledRecovered).toBe(0);
    expect(harness.pool.unexpectedExits).toEqual([]);
  });
});
