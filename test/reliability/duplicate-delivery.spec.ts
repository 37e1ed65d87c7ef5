import { WorkflowRunner } from '../../lib';
import { Order } from '../fixtures/order.entity';
import { checkInvariants, describeViolations } from './support/invariants';
import { sleep, waitUntil } from './support/wait';
import { ReliabilityHarness } from './support/reliability-harness';
import { between, report } from './support/report';
import type { WorkerCommand } from './support/worker-process';
import { transportLabel } from './support/reliability-transport';

const ITEMS = 5;
/** Children that only take commands (no BullMQ worker): together with this process, four racers. */
const RACERS = ['c1', 'c2', 'c3'];

/**
 * Issue #9, 5: duplicate and reordered deliveries, raced across processes: the same execution
 * delivered four times at once (three child processes and this one) and again afterwards; jobs
 * that arrive before their row is visible; the same signal (same idempotency key) delivered four
 * times at once; start() for the same hero from four processes at once.
 */
describe(`fault injection: duplicate and reordered deliveries ${transportLabel}`, () => {
  let harness: ReliabilityHarness;
  const lines: string[] = [];

  beforeAll(async () => {
    harness = await ReliabilityHarness.boot({
      concurrency: 4,
      settings: { stepMs: 10, items: ITEMS, itemMs: 5 },
      housekeeping: { stuckInProgressThreshold: '1h', stuckScheduledThreshold: '15m' },
    });
    for (const name of RACERS) harness.overrides.set(name, { worker: false });
    harness.overrides.set('inline', { worker: false, enqueueAfterCommit: false });
    // One slot per early job below, so none waits for another's 500 ms lookup.
    harness.overrides.set('w1', { concurrency: 16, poolSize: 24 });
    await Promise.all([...RACERS, 'inline'].map((name) => harness.pool.start(name)));
  });

  afterAll(async () => {
    if (harness) {
      report(`duplicate and reordered deliveries ${transportLabel}`, [
        ...lines,
        'actions:',
        ...harness.pool.actions,
      ]);
    }
    await harness?.close();
  });

  /** Runs `command` in every racer child and `local` here, all at once. */
  function race<T>(command: WorkerCommand, local: () => Promise<T>) {
    return Promise.allSettled([
      ...RACERS.map((name) => harness.pool.call<T>(name, command)),
      local(),
    ]);
  }

  async function expectInvariants(label: string, ids: string[]) {
    const invariants = await checkInvariants(harness.dataSource, {
      workflowIds: ids,
      retryExplained: () => false,
      retryReason: 'none allowed (no process died)',
      items: ITEMS,
      noRecovery: true,
    });
    lines.push(`${label} invariants:`, ...invariants.lines.map((line) => `  ${line}`));
    expect(describeViolations(invariants)).toBe('no violations');
  }

  it('the same execution delivered four times at once from four processes, and once more later, runs once', async () => {
    // No BullMQ worker runs yet: every step is delivered by hand.
    const ids = (await harness.startWorkflows({ ReliabilityChain: 20 })).get('ReliabilityChain')!;
    let deliveries = 0;
    for (let step = 0; step < 5; step++) {
      await Promise.all(
        ids.map(async (id) => {
          const execution = (await harness.service.currentExecution(id))!;
          const results = await race({ command: 'perform', executionId: execution.id }, () =>
            harness.app.get(WorkflowRunner).performStep(execution.id),
          );
          const failed = results.filter((result) => result.status === 'rejected');
          expect(failed).toEqual([]);
          // A late redelivery of the same job.
          await harness.pool.call(RACERS[step % RACERS.length], {
            command: 'perform',
            executionId: execution.id,
          });
          deliveries += results.length + 1;
        }),
      );
    }
    lines.push(
      `same execution: ${ids.length} workflows × 5 steps, ${deliveries} deliveries (4 concurrent from 4 processes + 1 late each)`,
    );
    await expectInvariants('same execution', ids);
  });

  it('a job that arrives before its row is visible runs once the row commits; one that gives up is re-enqueued by reconciliation', async () => {
    const queue = harness.queue;
    await harness.pool.start('w1');
    // The first test's jobs (all stale duplicates by now) drain first, so the worker is idle.
    await waitUntil(
      'the queue to drain',
      async () => (await queue.getWaitingCount()) + (await queue.getActiveCount()) === 0,
      60_000,
      100,
    );
    // Inline enqueue inside a caller transaction: the job reaches the worker before the commit.
    type Started = { id: string; committedAt: number };
    const startInTransaction = (commitAfterMs: number) =>
      harness.pool.call<Started>('inline', {
        command: 'startInTransaction',
        workflow: 'ReliabilityChain',
        commitAfterMs,
      });
    const [quick, late] = await Promise.all([
      Promise.all(Array.from({ length: 10 }, () => startInTransaction(200))),
      // Committed after the runner's 500 ms lookup gave up: the job is spent, the row stays scheduled.
      Promise.all(Array.from({ length: 5 }, () => startInTransaction(3_000))),
    ]);
    harness.pool.log(
      `started ${quick.length} workflows committing 200 ms after their first job, ${late.length} committing after 3 s`,
    );
    const quickIds = quick.map((started) => started.id);
    const lateIds = late.map((started) => started.id);
    await waitUntil(
      'the 200 ms ones to finish without housekeeping',
      () => harness.allFinished(quickIds),
      60_000,
      100,
    );
    const housekeeping = await harness.housekeepUntil(() => harness.allFinished(lateIds), {
      everyMs: 1_000,
      timeoutMs: 60_000,
    });
    const firsts = await harness.dataSource.query<
      Array<{ workflow_id: string; id: string; job_id: string }>
    >(
      `SELECT DISTINCT ON (workflow_id) workflow_id, id::text, job_id FROM geneva_drive_step_executions
       WHERE workflow_id = ANY($1) ORDER BY workflow_id, created_at, id`,
      [[...quickIds, ...lateIds]],
    );
    for (const started of [...quick, ...late]) {
      const first = firsts.find((row) => row.workflow_id === started.id)!;
      // The first job was taken by the worker before the row committed.
      const job = (await queue.getJob(first.id))!;
      expect(job.processedOn).toBeLessThan(started.committedAt);
      if (lateIds.includes(started.id)) {
        // It gave up on the invisible row before the commit; reconciliation re-enqueued it.
        expect(job.finishedOn).toBeLessThan(started.committedAt);
        expect(first.job_id).toBe(`${first.id}_1`);
      } else {
        expect(first.job_id).toBe(first.id);
      }
    }
    expect(housekeeping.totals.stuckScheduledRecovered).toBe(0);
    lines.push(
      `early jobs: ${quick.length} were taken before their row committed and found it (job id unchanged); ` +
        `${late.length} gave up and were re-enqueued by reconciliation within ${housekeeping.ms} ms (${housekeeping.runs} housekeeping runs, no stuck-scheduled recovery)`,
    );
    await expectInvariants('early jobs', [...quickIds, ...lateIds]);
  });

  it('the same signal (same idempotency key) delivered four times at once is stored and consumed once', async () => {
    const ids = (await harness.startWorkflows({ ReliabilitySignal: 30 })).get('ReliabilitySignal')!;
    let duplicates = 0;
    await Promise.all(
      ids.map(async (id) => {
        // Some before the step parks, some after.
        await sleep(between(0, 1_500));
        const key = `go-${id}`;
        const results = await race(
          { command: 'signal', workflowId: id, name: 'go', idempotencyKey: key },
          async () => {
            const signal = await harness.service.signal(id, 'go', { idempotencyKey: key });
            return { id: signal.id, duplicateDelivery: signal.duplicateDelivery };
          },
        );
        const values = results.map((result) => {
          if (result.status === 'rejected') throw result.reason;
          return result.value;
        });
        expect(new Set(values.map((value) => value.id)).size).toBe(1);
        expect(values.filter((value) => !value.duplicateDelivery)).toHaveLength(1);
        duplicates += values.filter((value) => value.duplicateDelivery).length;
      }),
    );
    await waitUntil('every signal workflow to finish', () => harness.allFinished(ids), 60_000, 100);
    // Once more after the workflow finished: still the same row, a duplicate.
    const again = await harness.service.signal(ids[0], 'go', { idempotencyKey: `go-${ids[0]}` });
    expect(again.duplicateDelivery).toBe(true);
    lines.push(
      `signals: ${ids.length} workflows × 4 concurrent deliveries with one key: ${duplicates} recognized as duplicates`,
    );
    await expectInvariants('signals', ids);
  });

  it('start() for the same hero from four processes at once creates one workflow', async () => {
    const orders = await harness.dataSource
      .getRepository(Order)
      .save(Array.from({ length: 30 }, () => ({ status: 'new' })));
    const ids: string[] = [];
    let refused = 0;
    await Promise.all(
      orders.map(async (order) => {
        const results = await race(
          { command: 'start', workflow: 'ReliabilityHero', heroId: order.id },
          async () => (await harness.service.start('ReliabilityHero', { hero: order })).id,
        );
        const started = results.filter((result) => result.status === 'fulfilled');
        const rejected = results.filter((result) => result.status === 'rejected');
        expect(started).toHaveLength(1);
        expect(rejected.map((result) => (result.reason as Error).name)).toEqual(
          rejected.map(() => 'WorkflowAlreadyOngoingError'),
        );
        refused += rejected.length;
        ids.push(String((started[0] as PromiseFulfilledResult<unknown>).value));
      }),
    );
    const rows = await harness.dataSource.query<Array<{ hero_id: string; count: number }>>(
      `SELECT hero_id, COUNT(*)::int AS count FROM geneva_drive_workflows WHERE type = 'ReliabilityHero' GROUP BY hero_id`,
    );
    expect(rows.filter((row) => row.count !== 1)).toEqual([]);
    expect(rows).toHaveLength(orders.length);
    await waitUntil('every hero workflow to finish', () => harness.allFinished(ids), 60_000, 100);
    lines.push(
      `start(): ${orders.length} heroes × 4 concurrent starts: ${orders.length} workflows, ${refused} refused with WorkflowAlreadyOngoingError`,
    );
    await expectInvariants('start', ids);
  });
});
