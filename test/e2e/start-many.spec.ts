import diagnosticsChannel from 'node:diagnostics_channel';
import { In } from 'typeorm';
import {
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS,
  InvalidArgumentError,
  WorkflowAlreadyOngoingError,
  StepExecutionEntity,
  WorkflowEntity,
  type GenevaDriveDiagnosticsEvent,
  type StartOptions,
} from '../../lib';
import { ThreeStepWorkflow } from '../fixtures/basic.workflows';
import { Order } from '../fixtures/order.entity';
import { StepJournal } from '../fixtures/step-journal';
import { WorkflowRepository } from '../../lib/ports/workflow.repository';
import { Deferred } from './support/deferred';
import { testDatabase, testDatabaseLabel } from './support/database';
import { recordMessages } from './support/sql-messages';
import { itIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { testTransport } from './support/transport';

/** Resolves once every named workflow has been finalized into `finished` (diagnostics events). */
class FinishedWatcher {
  private readonly finished = new Set<string>();
  private readonly waiters: Array<{ ids: string[]; resolve: () => void }> = [];
  private readonly listener = (message: unknown) => {
    const event = message as GenevaDriveDiagnosticsEvent;
    if (event.workflowState !== 'finished') return;
    this.finished.add(event.workflowId);
    for (const waiter of [...this.waiters]) {
      if (waiter.ids.every((id) => this.finished.has(id))) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  };

  constructor() {
    diagnosticsChannel.subscribe(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.finalize, this.listener);
  }

  all(ids: string[]): Promise<void> {
    if (ids.every((id) => this.finished.has(id))) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ ids, resolve }));
  }

  close(): void {
    diagnosticsChannel.unsubscribe(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.finalize, this.listener);
  }
}

describe(`startMany (${testDatabaseLabel} + BullMQ)`, () => {
  let harness: EngineHarness;
  let journal: StepJournal;
  let watcher: FinishedWatcher;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [ThreeStepWorkflow],
      providers: [StepJournal],
      entities: [Order],
    });
    journal = harness.get(StepJournal);
    watcher = new FinishedWatcher();
  });

  afterAll(async () => {
    watcher?.close();
    await harness?.close();
  });

  beforeEach(() => journal.entries.splice(0));

  async function newOrders(count: number): Promise<Order[]> {
    const repository = harness.dataSource.getRepository(Order);
    const orders: Order[] = [];
    for (let i = 0; i < count; i++) orders.push(await repository.save({ status: 'new' }));
    return orders;
  }

  async function workflowCount(): Promise<number> {
    return harness.dataSource.getRepository(WorkflowEntity).count();
  }

  async function jobCount(): Promise<number> {
    const counts = await harness
      .queue()
      .getJobCounts('waiting', 'delayed', 'active', 'completed', 'failed', 'prioritized');
    return Object.values(counts).reduce((sum, n) => sum + n, 0);
  }

  const idsOf = (rows: Array<WorkflowEntity | null>) =>
    rows.filter((row): row is WorkflowEntity => row !== null).map((row) => row.id);

  it('resolves the workflows in input order, and every one runs all its steps', async () => {
    const orders = await newOrders(25);
    const created = await harness.service.startMany(
      ThreeStepWorkflow,
      orders.map((hero) => ({ hero })),
    );
    expect(created.map((row) => row?.heroId)).toEqual(orders.map((order) => String(order.id)));
    expect(created.every((row) => row?.state === 'ready' && row.nextStepName === 'first')).toBe(
      true,
    );
    await watcher.all(idsOf(created));
    for (const workflow of idsOf(created)) {
      const history = await harness.history(workflow);
      expect(history.map((e) => `${e.stepName}:${e.state}`)).toEqual([
        'first:completed',
        'second:completed',
        'third:completed',
      ]);
    }
    expect(journal.entries.filter((entry) => entry === 'third')).toHaveLength(25);
  });

  it('an empty array resolves [] and writes nothing', async () => {
    const before = await workflowCount();
    await expect(harness.service.startMany(ThreeStepWorkflow, [])).resolves.toEqual([]);
    expect(await workflowCount()).toBe(before);
  });

  it("onConflict 'error': a hero with an ongoing workflow rejects naming it, and writes nothing", async () => {
    const orders = await newOrders(3);
    const [busy] = await newOrders(1);
    // Kept ongoing: its first step waits an hour.
    const ongoing = await harness.service.start(ThreeStepWorkflow, {
      hero: busy,
      stepJobOptions: { wait: '1h' },
    });
    const before = await workflowCount();
    const call = harness.service.startMany(ThreeStepWorkflow, [
      ...orders.map((hero) => ({ hero })),
      { hero: busy },
    ]);
    await expect(call).rejects.toThrow(WorkflowAlreadyOngoingError);
    await expect(call).rejects.toThrow(`Order ${busy.id}`);
    expect(await workflowCount()).toBe(before);
    await harness.service.cancel(ongoing);
  });

  it("onConflict 'error': two entries for one hero reject naming it, and write nothing", async () => {
    const [a, b] = await newOrders(2);
    const before = await workflowCount();
    const call = harness.service.startMany(ThreeStepWorkflow, [
      { hero: a },
      { hero: b },
      { hero: a },
    ]);
    await expect(call).rejects.toThrow(WorkflowAlreadyOngoingError);
    await expect(call).rejects.toThrow(`more than one entry is for Order ${a.id}`);
    expect(await workflowCount()).toBe(before);
  });

  it("onConflict 'skip': conflicting entries resolve null; of duplicates the first wins", async () => {
    const [a, b, busy] = await newOrders(3);
    const ongoing = await harness.service.start(ThreeStepWorkflow, {
      hero: busy,
      stepJobOptions: { wait: '1h' },
    });
    const created = await harness.service.startMany(
      ThreeStepWorkflow,
      [{ hero: a }, { hero: busy }, { hero: b }, { hero: a, metadata: { second: true } }],
      { onConflict: 'skip' },
    );
    expect(created.map((row) => row?.heroId ?? null)).toEqual([
      String(a.id),
      null,
      String(b.id),
      null,
    ]);
    expect(created[0]?.metadata).toBeNull();
    await watcher.all(idsOf(created));
    const ongoingForA = await harness.service.list({ workflow: ThreeStepWorkflow, hero: a });
    expect(ongoingForA).toHaveLength(1);
    await harness.service.cancel(ongoing);
  });

  it('writes for an entry the rows start() writes for the same options', async () => {
    const [single, bulk] = await newOrders(2);
    const options: StartOptions = {
      metadata: {
        quoted: `it's "quoted"`,
        backslash: 'a\\b',
        unicode: 'ünï ✓ 😀',
        nested: { list: [1, null, true, 'x'], empty: '' },
      },
      context: { tenant: "o'brien \\ co", depth: { n: 2.5 } },
      stepJobOptions: { priority: 3, wait: '1h' },
    };
    const started = await harness.service.start(ThreeStepWorkflow, { ...options, hero: single });
    const [created] = await harness.service.startMany(ThreeStepWorkflow, [
      { ...options, hero: bulk },
    ]);
    const columns = async (id: string) => {
      const workflow = await harness.dataSource
        .getRepository(WorkflowEntity)
        .createQueryBuilder('workflow')
        .addSelect(['workflow.context', 'workflow.traceParent'])
        .where('workflow.id = :id', { id })
        .getOneOrFail();
      const [execution] = await harness.history(id);
      const { id: _w, heroId: _h, createdAt: _c, updatedAt: _u, ...workflowColumns } = workflow;
      const {
        id: _e,
        workflowId: _i,
        jobId: _j,
        createdAt: _ec,
        updatedAt: _eu,
        scheduledFor,
        ...executionColumns
      } = execution;
      const waitMs = scheduledFor.getTime() - workflow.createdAt.getTime();
      return { workflowColumns, executionColumns, waitMs };
    };
    const fromStart = await columns(started.id);
    const fromStartMany = await columns(created!.id);
    expect(fromStartMany.workflowColumns).toEqual(fromStart.workflowColumns);
    expect(fromStartMany.workflowColumns.metadata).toMatchObject(options.metadata!);
    expect(fromStartMany.workflowColumns.context).toEqual(options.context);
    expect(fromStartMany.executionColumns).toEqual(fromStart.executionColumns);
    // Each waits the hour from its own creation (the clocks differ by the calls' time).
    expect(Math.abs(fromStartMany.waitMs - 3_600_000)).toBeLessThan(1_000);
    expect(Math.abs(fromStart.waitMs - 3_600_000)).toBeLessThan(1_000);
    await harness.service.cancel(started);
    await harness.service.cancel(created!);
  });

  it("each entry's first step is due after its own wait", async () => {
    const orders = await newOrders(3);
    const waits = ['2h', '1h', '2h'] as const;
    const created = await harness.service.startMany(
      ThreeStepWorkflow,
      orders.map((hero, index) => ({ hero, stepJobOptions: { wait: waits[index] } })),
    );
    const dueAfterMs: number[] = [];
    for (const workflow of created) {
      const [execution] = await harness.history(workflow!.id);
      dueAfterMs.push(execution.scheduledFor.getTime() - workflow!.createdAt.getTime());
      await harness.service.cancel(workflow!);
    }
    expect(dueAfterMs.map((ms) => Math.round(ms / 60_000))).toEqual([120, 60, 120]);
  });

  itIf(testDatabase === 'postgres' && testTransport !== 'local')(
    'PostgreSQL: 1,001 entries go in as one INSERT per table, and each gets its job',
    async () => {
      const inserted = await harness.dataSource
        .getRepository(Order)
        .insert(Array.from({ length: 1_001 }, () => ({ status: 'new' })));
      const heroes = inserted.identifiers.map((row) => ({ ...row, status: 'new' }) as Order);
      const beforeJobs = await jobCount();
      const sent = recordMessages(harness.dataSource);
      const created = await harness.service.startMany(
        ThreeStepWorkflow,
        heroes.map((hero) => ({ hero, stepJobOptions: { wait: '1h' } })),
      );
      const inserts = sent.flat().filter((statement) => statement.startsWith('INSERT INTO'));
      expect(inserts).toHaveLength(2);
      expect(inserts[0]).toContain('geneva_drive_workflows');
      expect(inserts[1]).toContain('geneva_drive_step_executions');
      expect(created.map((row) => row?.heroId)).toEqual(heroes.map((hero) => String(hero.id)));
      expect((await jobCount()) - beforeJobs).toBe(1_001);
      for (const row of created) await harness.service.cancel(row!);
    },
  );

  it('allowMultiple entries never conflict', async () => {
    const [a] = await newOrders(1);
    const created = await harness.service.startMany(ThreeStepWorkflow, [
      { hero: a, allowMultiple: true },
      { hero: a, allowMultiple: true },
    ]);
    expect(created).toHaveLength(2);
    await watcher.all(idsOf(created));
  });

  // Counts BullMQ jobs: not on the local transport.
  itIf(testTransport !== 'local')(
    "in a caller's transaction: rolled back leaves nothing and enqueues nothing; committed enqueues after commit",
    async () => {
      const orders = await newOrders(3);
      const beforeRows = await workflowCount();
      const beforeJobs = await jobCount();
      await expect(
        harness.dataSource.transaction(async (manager) => {
          await harness.service.startMany(
            ThreeStepWorkflow,
            orders.map((hero) => ({ hero })),
            { manager },
          );
          throw new Error('caller rolls back');
        }),
      ).rejects.toThrow('caller rolls back');
      expect(await workflowCount()).toBe(beforeRows);

      const created = await harness.dataSource.transaction(async (manager) => {
        const rows = await harness.service.startMany(
          ThreeStepWorkflow,
          orders.map((hero) => ({ hero })),
          { manager },
        );
        // Nothing is enqueued before the caller commits.
        expect(await jobCount()).toBe(beforeJobs);
        return rows;
      });
      await watcher.all(idsOf(created));
      // The committed call's jobs (steps may chain in process without one), none of the rolled-back call.
      let jobsOfCreated = 0;
      for (const id of idsOf(created)) {
        for (const execution of await harness.history(id)) {
          if (await harness.queue().getJob(execution.jobId ?? execution.id)) jobsOfCreated++;
        }
      }
      expect(jobsOfCreated).toBeGreaterThanOrEqual(created.length);
      expect((await jobCount()) - beforeJobs).toBe(jobsOfCreated);
    },
  );

  it('refuses more than 10,000 entries, a non-array, unknown keys and a bad onConflict', async () => {
    const [a] = await newOrders(1);
    const tooMany: StartOptions[] = Array.from({ length: 10_001 }, () => ({}));
    await expect(harness.service.startMany(ThreeStepWorkflow, tooMany)).rejects.toThrow(
      /at most 10000 entries/,
    );
    await expect(
      harness.service.startMany(ThreeStepWorkflow, { hero: a } as unknown as StartOptions[]),
    ).rejects.toThrow(InvalidArgumentError);
    await expect(
      harness.service.startMany(ThreeStepWorkflow, [], { onConflict: 'ignore' as 'skip' }),
    ).rejects.toThrow(/onConflict must be 'error' or 'skip'/);
    await expect(
      harness.service.startMany(ThreeStepWorkflow, [], { retries: 1 } as unknown as object),
    ).rejects.toThrow(/unknown option\(s\) retries/);
  });

  it("a bad entry rejects the whole call with the entry's index, and writes nothing", async () => {
    const orders = await newOrders(3);
    const before = await workflowCount();
    await expect(
      harness.service.startMany(ThreeStepWorkflow, [
        { hero: orders[0] },
        {
          hero: orders[1],
          stepJobOptions: { wait: 'soon' },
        },
      ]),
    ).rejects.toThrow(/starts\[1\]/);
    await expect(
      harness.service.startMany(ThreeStepWorkflow, [
        { hero: orders[0] },
        { hero: 42 as unknown as object },
      ]),
    ).rejects.toThrow(/startMany\(\) starts\[1\]/);
    await expect(
      harness.service.startMany(ThreeStepWorkflow, [
        { hero: orders[2] },
        { hero: orders[0], manager: harness.dataSource.manager },
      ]),
    ).rejects.toThrow(/starts\[1\].*unknown option\(s\) manager/);
    expect(await workflowCount()).toBe(before);
  });

  it.each(['error', 'skip'] as const)(
    "one ongoing workflow per hero when startMany (onConflict '%s') races start() for the same hero",
    async (onConflict) => {
      for (let round = 0; round < 20; round++) {
        const [hero, ...others] = await newOrders(4);
        const [many, one] = await Promise.allSettled([
          harness.service.startMany(
            ThreeStepWorkflow,
            [...others, hero].map((h) => ({ hero: h, stepJobOptions: { wait: '1h' } })),
            { onConflict },
          ),
          harness.service.start(ThreeStepWorkflow, { hero, stepJobOptions: { wait: '1h' } }),
        ]);
        for (const result of [many, one]) {
          if (result.status === 'rejected')
            expect(result.reason).toBeInstanceOf(WorkflowAlreadyOngoingError);
        }
        const ongoing = await harness.service.list({
          workflow: ThreeStepWorkflow,
          hero,
          ongoing: true,
        });
        expect(ongoing).toHaveLength(1);
        if (many.status === 'fulfilled') {
          // 'skip' keeps the other heroes whoever won hero's race.
          expect(many.value.slice(0, 3).every((row) => row !== null)).toBe(true);
          expect(many.value[3] === null).toBe(one.status === 'fulfilled');
        } else {
          expect(onConflict).toBe('error');
          expect(one.status).toBe('fulfilled');
          for (const other of others) {
            expect(
              await harness.service.list({ workflow: ThreeStepWorkflow, hero: other }),
            ).toHaveLength(0);
          }
        }
        for (const row of await harness.service.list({
          workflow: ThreeStepWorkflow,
          ongoing: true,
        })) {
          await harness.service.cancel(row);
        }
      }
    },
  );

  it.each(['skip', 'error'] as const)(
    "the unique index decides when an ongoing workflow commits after the pre-check (insertWorkflows '%s')",
    async (onConflict) => {
      const [hero, other] = await newOrders(2);
      const repository = harness.get(WorkflowRepository);
      const inserted = new Deferred();
      const release = new Deferred();
      // start() for hero in a caller's transaction held open: startMany's pre-check cannot see it.
      const holder = harness.dataSource.transaction(async (manager) => {
        await harness.service.start(ThreeStepWorkflow, {
          hero,
          manager,
          stepJobOptions: { wait: '1h' },
        });
        inserted.resolve();
        await release.promise;
      });
      await inserted.promise;
      const row = (order: Order) => ({
        type: 'ThreeStepWorkflow',
        heroType: 'Order',
        heroId: String(order.id),
        allowMultiple: false,
        metadata: null,
        nextStepName: 'first',
      });
      // The batch INSERT waits for the holder's uncommitted row (or meets it committed).
      const racing = repository.transaction((tx) =>
        repository.insertWorkflows(tx, [row(other), row(hero)], onConflict),
      );
      release.resolve();
      await holder;
      if (onConflict === 'skip') {
        const rows = await racing;
        expect(rows.map((r) => r?.heroId ?? null)).toEqual([String(other.id), null]);
      } else {
        const error = await racing.then(
          () => null,
          (e: unknown) => e,
        );
        expect(repository.isUniqueViolation(error)).toBe(true);
        expect(await harness.service.list({ workflow: ThreeStepWorkflow, hero: other })).toEqual(
          [],
        );
      }
      const ongoing = await harness.service.list({
        workflow: ThreeStepWorkflow,
        hero,
        ongoing: true,
      });
      expect(ongoing).toHaveLength(1);
      for (const w of await harness.service.list({ workflow: ThreeStepWorkflow, ongoing: true })) {
        await harness.service.cancel(w);
      }
    },
  );

  it("two concurrent startMany calls naming the same heroes in opposite orders: one workflow per hero ('skip')", async () => {
    const repository = harness.dataSource.getRepository(Order);
    for (let round = 0; round < 3; round++) {
      const orders = await repository.save(
        Array.from({ length: 100 }, () => repository.create({ status: 'new' })),
      );
      const entries = orders.map((hero) => ({ hero, stepJobOptions: { wait: '1h' } }));
      const [one, two] = await Promise.all([
        harness.service.startMany(ThreeStepWorkflow, entries, { onConflict: 'skip' }),
        harness.service.startMany(ThreeStepWorkflow, [...entries].reverse(), {
          onConflict: 'skip',
        }),
      ]);
      // Each hero got exactly one workflow, from one call or the other.
      const reversed = [...two].reverse();
      expect(one.every((row, i) => (row === null) !== (reversed[i] === null))).toBe(true);
      for (const row of await harness.service.list({
        workflow: ThreeStepWorkflow,
        ongoing: true,
      })) {
        await harness.service.cancel(row);
      }
    }
  });

  // Last: it leaves its workflows waiting (the schema is dropped after). Counts BullMQ's delayed
  // jobs: not on the local transport.
  itIf(testTransport !== 'local')(
    "600 entries, 'skip' for a hero deep in them (several multi-row INSERTs on MariaDB and SQLite): every execution in place",
    async () => {
      const repository = harness.dataSource.getRepository(Order);
      const orders = await repository.save(
        Array.from({ length: 600 }, () => repository.create({ status: 'new' })),
      );
      const busy = orders[400];
      await harness.service.start(ThreeStepWorkflow, {
        hero: busy,
        stepJobOptions: { wait: '1h' },
      });
      const created = await harness.service.startMany(
        ThreeStepWorkflow,
        orders.map((hero) => ({ hero, stepJobOptions: { wait: '1h' } })),
        { onConflict: 'skip' },
      );
      expect(created.map((row) => row?.heroId ?? null)).toEqual(
        orders.map((order) => (order === busy ? null : String(order.id))),
      );
      const executions = await harness.dataSource
        .getRepository(StepExecutionEntity)
        .find({ where: { workflowId: In(idsOf(created)) } });
      expect(executions).toHaveLength(599);
      expect(new Set(executions.map((e) => e.workflowId)).size).toBe(599);
      expect(executions.every((e) => e.stepName === 'first' && e.state === 'scheduled')).toBe(true);
      const delayed = await harness.queue().getJobCounts('delayed');
      expect(delayed.delayed).toBeGreaterThanOrEqual(600);
    },
  );
});
