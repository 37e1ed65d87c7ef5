import { QueryFailedError, type DataSource, type Logger } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { StepExecutionEntity, WorkflowEntity, type GenevaDriveModuleOptions } from '../../lib';
import { GenevaDriveDataSource } from '../../lib/persistence/geneva-drive-data-source';
import { isTransientDatabaseError } from '../../lib/persistence/transient-database-error';
import type { UnitOfWork } from '../../lib/persistence/unit-of-work';
import { WorkflowStore } from '../../lib/persistence/workflow.store';
import { HeroResolver } from '../../lib/runner/hero-resolver';
import { ThreeStepWorkflow } from '../fixtures/basic.workflows';
import { Order } from '../fixtures/order.entity';
import { StepJournal } from '../fixtures/step-journal';
import { describeOn } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { PreparedStatementLog, splitStatements } from './support/sql-text';

/** A message the DataSource sent, and the pg client it went on. */
interface SentMessage {
  sql: string;
  client: object | undefined;
}

/** The tables a statement's shape names. */
const TABLES = [
  'geneva_drive_workflows',
  'geneva_drive_step_executions',
  'geneva_drive_signals',
  'test_orders',
];

/**
 * Every message the DataSource sends, as its logger sees it (TypeORM logs each query before
 * sending it, and PostgresQueryBatch logs its messages the same way; bench/support/sql-counter.ts
 * wraps the logger likewise), with the batch's prepared statements resolved: the PREPAREs are
 * remembered so that an EXECUTE can be read as the SQL it runs.
 */
class SentSql {
  private readonly messages: SentMessage[] = [];
  private readonly prepared = new PreparedStatementLog();

  private constructor() {}

  static install(dataSource: DataSource): SentSql {
    const sent = new SentSql();
    const logger = dataSource.logger;
    const recording: Logger = Object.assign(Object.create(logger) as Logger, {
      logQuery: (...args: Parameters<Logger['logQuery']>) => {
        sent.record(args[0], args[2]);
        logger.logQuery(...args);
      },
    });
    // `logger` is read-only in TypeORM's typings but a plain property at run time.
    Object.assign(dataSource, { logger: recording });
    return sent;
  }

  /** Where the log is now, for `since`. */
  mark(): number {
    return this.messages.length;
  }

  since(mark: number): SentMessage[] {
    return this.messages.slice(mark);
  }

  /** Each message since `mark` as its statements, EXECUTEs resolved and PREPAREs left out. */
  statements(mark: number): string[][] {
    return this.since(mark).map((message) => this.resolve(message.sql));
  }

  /**
   * Each message since `mark` as the shapes of its statements: `START TRANSACTION`, `COMMIT`,
   * `ROLLBACK`, or the verb and table (`UPDATE geneva_drive_step_executions`), `FOR UPDATE` when
   * locking. SET TRANSACTION (part of the opening where the server's default isolation is not
   * READ COMMITTED) is left out.
   */
  shapes(mark: number): string[][] {
    return this.statements(mark).map((statements) =>
      statements.filter((statement) => !statement.startsWith('SET TRANSACTION')).map(shapeOf),
    );
  }

  private record(sql: string, queryRunner: unknown): void {
    const client = (queryRunner as { databaseConnection?: object } | undefined)?.databaseConnection;
    this.messages.push({ sql, client });
    this.prepared.remember(sql);
  }

  private resolve(sql: string): string[] {
    return splitStatements(sql)
      .filter((statement) => !statement.startsWith('PREPARE '))
      .map((statement) => {
        if (!statement.startsWith('EXECUTE ')) return statement;
        const expanded = this.prepared.expand(statement);
        if (!expanded) throw new Error(`No PREPARE was seen for ${statement}`);
        return expanded;
      });
  }
}

function shapeOf(statement: string): string {
  const control = /^(START TRANSACTION|COMMIT|ROLLBACK)\b/.exec(statement);
  if (control) return control[1];
  const verb =
    /^\s*(SELECT|INSERT|UPDATE|DELETE)\b/i.exec(statement)?.[1].toUpperCase() ?? statement;
  const table = TABLES.find((name) => statement.includes(`"${name}"`));
  const lock = /\bFOR UPDATE\s*$/.test(statement) ? 'FOR UPDATE' : null;
  return [verb, table, lock].filter((part) => part).join(' ');
}

/** The part of pg-pool and its clients the DEALLOCATE test touches. */
interface PgPool {
  idleCount: number;
  connect(): Promise<PgPoolClient>;
}
interface PgPoolClient {
  query(sql: string): Promise<unknown>;
  release(): void;
}

type NewExecutionFields = Parameters<WorkflowStore['insertExecution']>[1];

const OPENING_AND_LOCKS = [
  'START TRANSACTION',
  'SELECT geneva_drive_workflows FOR UPDATE',
  'SELECT geneva_drive_step_executions FOR UPDATE',
];

/** The library's pieces the tests drive directly, on one booted app. */
class BatchBench {
  readonly database: GenevaDriveDataSource;
  readonly store: WorkflowStore;
  readonly heroes: HeroResolver;
  readonly sent: SentSql;

  constructor(readonly harness: EngineHarness) {
    this.database = harness.get(GenevaDriveDataSource);
    this.store = harness.get(WorkflowStore);
    this.heroes = harness.get(HeroResolver);
    this.sent = SentSql.install(harness.dataSource);
  }

  static async boot(options: GenevaDriveModuleOptions = {}): Promise<BatchBench> {
    const harness = await EngineHarness.boot({
      workflows: [ThreeStepWorkflow],
      providers: [StepJournal],
      entities: [Order],
      options: { worker: false, ...options },
    });
    return new BatchBench(harness);
  }

  /** A runner transaction: batched on PostgreSQL. */
  hotPath<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> {
    return this.database.transaction(work, undefined, { hotPath: true });
  }

  /** A library transaction outside the hot path: plain TypeORM. */
  plain<T>(work: (uow: UnitOfWork) => Promise<T>): Promise<T> {
    return this.database.transaction(work);
  }

  newWorkflow(metadata: Record<string, unknown> | null = null): Promise<WorkflowEntity> {
    return this.plain((uow) =>
      this.store.insertWorkflow(uow, {
        type: 'ThreeStepWorkflow',
        heroType: null,
        heroId: null,
        allowMultiple: false,
        metadata,
      }),
    );
  }

  newExecution(
    workflowId: string,
    fields: Partial<NewExecutionFields> = {},
  ): Promise<StepExecutionEntity> {
    return this.plain((uow) =>
      this.store.insertExecution(uow, {
        workflowId,
        stepName: 'first',
        scheduledFor: new Date(),
        ...fields,
      }),
    );
  }

  async execution(id: string): Promise<StepExecutionEntity> {
    const execution = await this.store.findExecution(this.database.manager, id);
    if (!execution) throw new Error(`execution ${id} is gone`);
    return execution;
  }

  async workflow(id: string): Promise<WorkflowEntity> {
    return this.database.manager.findOneByOrFail(WorkflowEntity, { id });
  }

  /** What lockWorkflow and lockExecution read outside the batch (plain TypeORM getOne). */
  lockedByTypeOrm(workflowId: string, executionId: string) {
    return this.plain(async (uow) => ({
      workflow: await this.store.lockWorkflow(uow, workflowId),
      execution: await this.store.lockExecution(uow, executionId),
    }));
  }

  close(): Promise<void> {
    return this.harness.close();
  }
}

const AWKWARD_NOTE = 'it\'s a \\ path;\n  next line "quoted" $1 ü';

/**
 * What the runner's finalize does on success: lock both rows, complete the execution, insert the
 * next one, point the workflow at it. The locked rows must be what TypeORM's own lock reads return
 * (checked inside the transaction, before the changes). Resolves the rows it left and what was
 * sent.
 */
async function finishStepAndScheduleNext(bench: BatchBench) {
  const workflow = await bench.newWorkflow({ stepJobOptions: { attempts: 3 }, note: AWKWARD_NOTE });
  const execution = await bench.newExecution(workflow.id, {
    state: 'in_progress',
    startedAt: new Date('2026-04-01T08:00:00.001Z'),
    cursor: { page: 2, at: new Date('2026-04-01T07:59:59.999Z') },
  });
  const reference = await bench.lockedByTypeOrm(workflow.id, execution.id);
  const done = new Date('2026-04-01T08:00:01.234Z');
  const mark = bench.sent.mark();
  const next = await bench.hotPath(async (uow) => {
    const locked = await bench.store.lockRows(uow, workflow.id, execution.id);
    expect(locked.workflow).toStrictEqual(reference.workflow);
    expect(locked.execution).toStrictEqual(reference.execution);
    await bench.store.updateExecution(uow, locked.execution!, {
      state: 'completed',
      outcome: 'success',
      completedAt: done,
      finishedAt: done,
      metadata: { user: { note: AWKWARD_NOTE } },
    });
    const next = await bench.store.insertExecution(uow, {
      workflowId: workflow.id,
      stepName: 'second',
      scheduledFor: done,
    });
    await bench.store.updateWorkflow(uow, locked.workflow!, {
      state: 'performing',
      nextStepName: 'second',
    });
    return next;
  });
  return {
    workflow,
    execution,
    done,
    next,
    messages: bench.sent.since(mark),
    shapes: bench.sent.shapes(mark),
    rows: {
      workflow: await bench.workflow(workflow.id),
      finished: await bench.execution(execution.id),
      next: await bench.execution(next.id),
    },
  };
}

/** What both prepared and inlined batches must send and commit for `finishStepAndScheduleNext`. */
function expectStepFinishedAndNextScheduled(
  run: Awaited<ReturnType<typeof finishStepAndScheduleNext>>,
): void {
  expect(run.shapes).toEqual([
    OPENING_AND_LOCKS,
    [
      'UPDATE geneva_drive_step_executions',
      'INSERT geneva_drive_step_executions',
      'UPDATE geneva_drive_workflows',
      'COMMIT',
    ],
  ]);
  expect(run.rows.finished).toMatchObject({
    state: 'completed',
    outcome: 'success',
    completedAt: run.done,
    finishedAt: run.done,
    metadata: { user: { note: AWKWARD_NOTE } },
    cursor: { page: 2, at: new Date('2026-04-01T07:59:59.999Z') },
  });
  expect(run.rows.next).toMatchObject({
    id: run.next.id,
    workflowId: run.workflow.id,
    stepName: 'second',
    state: 'scheduled',
    outcome: null,
    scheduledFor: run.done,
    jobId: run.next.id,
  });
  expect(run.rows.workflow).toMatchObject({
    state: 'performing',
    nextStepName: 'second',
    metadata: { stepJobOptions: { attempts: 3 }, note: AWKWARD_NOTE },
  });
}

/**
 * On PostgreSQL the runner's transactions go through PostgresQueryBatch, which takes over the
 * query runner to save round trips: the opening waits for the first statement, the store's writes
 * wait for the next read of a library table or the COMMIT, an update of a row inserted in the
 * same batch joins its INSERT, and statements run as prepared statements. Every one of these
 * changes what reaches the database and when, so each is checked here against the SQL actually
 * sent and the rows actually committed: a batch that sends writes late, in the wrong order, or
 * not at all loses or corrupts workflow state without any error.
 */
describeOn('postgres')('PostgresQueryBatch on the runner transactions (PostgreSQL)', () => {
  let bench: BatchBench;

  beforeAll(async () => {
    bench = await BatchBench.boot();
  });

  afterAll(() => bench?.close());

  describe('round trips', () => {
    it('sends nothing for a hot-path transaction that makes no statement', async () => {
      const mark = bench.sent.mark();
      await expect(bench.hotPath(() => Promise.resolve('nothing to do'))).resolves.toBe(
        'nothing to do',
      );
      expect(bench.sent.since(mark)).toEqual([]);
    });

    it('sends a transaction whose only work is a write as one message: START TRANSACTION; the write; COMMIT', async () => {
      const workflow = await bench.newWorkflow();
      const execution = await bench.newExecution(workflow.id);
      const startedAt = new Date('2026-03-01T10:00:00.123Z');

      const mark = bench.sent.mark();
      await bench.hotPath((uow) =>
        bench.store.updateExecution(uow, execution, { state: 'in_progress', startedAt }),
      );

      expect(bench.sent.shapes(mark)).toEqual([
        ['START TRANSACTION', 'UPDATE geneva_drive_step_executions', 'COMMIT'],
      ]);
      expect(bench.sent.statements(mark)[0]).toContainEqual(
        expect.stringContaining(`'${execution.id}'`),
      );
      expect(await bench.execution(execution.id)).toMatchObject({
        state: 'in_progress',
        startedAt,
      });
    });

    it("lockRows sends the opening and both locking reads in one message and hydrates them as TypeORM's lock reads do", async () => {
      const metadata = {
        stepJobOptions: { attempts: 3 },
        list: [1, 'two', null, true],
        note: AWKWARD_NOTE,
      };
      const workflow = await bench.newWorkflow(metadata);
      const cursorAt = new Date('2026-02-03T04:05:06.789Z');
      const execution = await bench.newExecution(workflow.id, {
        metadata: { user: { nested: { quote: "'" } } },
        cursor: { page: 2, at: cursorAt },
      });

      const mark = bench.sent.mark();
      const locked = await bench.hotPath((uow) =>
        bench.store.lockRows(uow, workflow.id, execution.id, [
          { template: 'SELECT $1::int + 1 AS "answer"', values: ["'41'"] },
        ]),
      );

      expect(bench.sent.shapes(mark)).toEqual([[...OPENING_AND_LOCKS, 'SELECT'], ['COMMIT']]);
      const reference = await bench.lockedByTypeOrm(workflow.id, execution.id);
      expect(locked.workflow).toBeInstanceOf(WorkflowEntity);
      expect(locked.execution).toBeInstanceOf(StepExecutionEntity);
      expect(locked.workflow).toStrictEqual(reference.workflow);
      expect(locked.execution).toStrictEqual(reference.execution);
      expect(locked.workflow!.createdAt).toBeInstanceOf(Date);
      expect(locked.workflow!.createdAt).toEqual(workflow.createdAt);
      expect(locked.workflow!.metadata).toEqual(metadata);
      expect(locked.execution!.scheduledFor).toEqual(execution.scheduledFor);
      expect(locked.execution!.cursor).toEqual({ page: 2, at: cursorAt });
      expect((locked.execution!.cursor as { at: unknown }).at).toBeInstanceOf(Date);
      // A read sent alongside comes back in place (the PREPAREs in between do not shift it).
      expect(locked.alongside.map((result) => result.rows)).toEqual([[{ answer: 42 }]]);
    });

    it('lockRows resolves null for rows that do not exist', async () => {
      const locked = await bench.hotPath((uow) => bench.store.lockRows(uow, uuidv7(), uuidv7()));
      expect(locked).toEqual({ workflow: null, execution: null, alongside: [] });
    });

    it('sends a finalize (lock, complete, insert the next, point the workflow at it) in two messages, with prepared statements', async () => {
      const run = await finishStepAndScheduleNext(bench);
      expectStepFinishedAndNextScheduled(run);
      for (const message of run.messages.slice(0, 2)) {
        expect(message.sql).toMatch(/^EXECUTE geneva_drive_\d+_\d+\(/m);
        // Every statement runs through EXECUTE: none is sent as plain SQL.
        expect(message.sql).not.toMatch(/^(SELECT|INSERT|UPDATE)\b/m);
      }
    });
  });

  describe('pending writes', () => {
    it('are sent before a later read of a library table, which sees them; a SELECT of a hero table does not send them', async () => {
      const order = await bench.harness.dataSource.getRepository(Order).save({ status: 'paid' });
      const workflow = await bench.newWorkflow();
      const execution = await bench.newExecution(workflow.id);
      const startedAt = new Date('2026-03-02T09:00:00.000Z');

      const mark = bench.sent.mark();
      const { hero, reread } = await bench.hotPath(async (uow) => {
        const { execution: locked } = await bench.store.lockRows(uow, workflow.id, execution.id);
        await bench.store.updateExecution(uow, locked!, { state: 'in_progress', startedAt });
        // TypeORM's own SELECT of a table that is not the library's (a user's query in a hook).
        const hero = await uow.manager.getRepository(Order).findOneBy({ id: order.id });
        const reread = await bench.store.findExecution(uow.manager, execution.id);
        return { hero, reread };
      });

      expect(reread).toMatchObject({ state: 'in_progress', startedAt });
      expect(hero).toEqual(order);
      expect(bench.sent.shapes(mark)).toEqual([
        OPENING_AND_LOCKS,
        ['SELECT test_orders'],
        ['UPDATE geneva_drive_step_executions'],
        ['SELECT geneva_drive_step_executions'],
        ['COMMIT'],
      ]);
      expect(await bench.execution(execution.id)).toMatchObject({
        state: 'in_progress',
        startedAt,
      });
    });

    it("travel with the library's own hero read (HeroResolver.load), in one message, writes first", async () => {
      const order = await bench.harness.dataSource.getRepository(Order).save({ status: 'paid' });
      const workflow = await bench.newWorkflow();
      const execution = await bench.newExecution(workflow.id);

      const mark = bench.sent.mark();
      const hero = await bench.hotPath(async (uow) => {
        const { execution: locked } = await bench.store.lockRows(uow, workflow.id, execution.id);
        await bench.store.updateExecution(uow, locked!, {
          state: 'in_progress',
          startedAt: new Date(),
        });
        return bench.heroes.load(uow, 'Order', String(order.id));
      });

      expect(hero).toBeInstanceOf(Order);
      expect(hero).toEqual(order);
      expect(bench.sent.shapes(mark)).toEqual([
        OPENING_AND_LOCKS,
        ['UPDATE geneva_drive_step_executions', 'SELECT test_orders'],
        ['COMMIT'],
      ]);
      expect(await bench.execution(execution.id)).toMatchObject({ state: 'in_progress' });
    });

    it('an update by id of the row inserted last joins its INSERT', async () => {
      const workflow = await bench.newWorkflow();
      const scheduledFor = new Date('2026-03-03T00:00:00.000Z');
      const startedAt = new Date('2026-03-03T00:00:00.500Z');

      const mark = bench.sent.mark();
      const inserted = await bench.hotPath(async (uow) => {
        const execution = await bench.store.insertExecution(uow, {
          workflowId: workflow.id,
          stepName: 'second',
          scheduledFor,
        });
        await bench.store.updateExecution(uow, execution, { state: 'in_progress', startedAt });
        return execution;
      });

      expect(bench.sent.shapes(mark)).toEqual([
        ['START TRANSACTION', 'INSERT geneva_drive_step_executions', 'COMMIT'],
      ]);
      const insert = bench.sent.statements(mark)[0][1];
      expect(insert).toContain("'in_progress'");
      expect(insert).toContain(`'${startedAt.toISOString()}'`);
      expect(insert).not.toContain("'scheduled'");
      expect(await bench.execution(inserted.id)).toMatchObject({
        state: 'in_progress',
        startedAt,
        stepName: 'second',
        scheduledFor,
      });
    });

    it('an update by id does not join the INSERT past an update of another row: a unique index may tie the two', async () => {
      // One active (scheduled or in progress) execution per workflow: A waits, B is active; B is
      // canceled, then A scheduled. Joined, the INSERT of A as scheduled would precede B's cancel.
      const workflow = await bench.newWorkflow();
      const active = await bench.newExecution(workflow.id, { state: 'in_progress' });

      const mark = bench.sent.mark();
      const inserted = await bench.hotPath(async (uow) => {
        const waiting = await bench.store.insertExecution(uow, {
          workflowId: workflow.id,
          stepName: 'second',
          scheduledFor: new Date(),
          state: 'waiting',
        });
        await bench.store.updateExecution(uow, active, { state: 'canceled', outcome: 'canceled' });
        await bench.store.updateExecution(uow, waiting, { state: 'scheduled' });
        return waiting;
      });

      expect(bench.sent.shapes(mark)).toEqual([
        [
          'START TRANSACTION',
          'INSERT geneva_drive_step_executions',
          'UPDATE geneva_drive_step_executions',
          'UPDATE geneva_drive_step_executions',
          'COMMIT',
        ],
      ]);
      expect(await bench.execution(inserted.id)).toMatchObject({ state: 'scheduled' });
      expect(await bench.execution(active.id)).toMatchObject({ state: 'canceled' });
    });

    it('an update by id does not join the INSERT past an update of that table by another criterion (the stray sweep)', async () => {
      const workflow = await bench.newWorkflow();
      const startedAt = new Date('2026-03-04T00:00:00.500Z');

      const mark = bench.sent.mark();
      const inserted = await bench.hotPath(async (uow) => {
        const execution = await bench.store.insertExecution(uow, {
          workflowId: workflow.id,
          stepName: 'first',
          scheduledFor: new Date(),
        });
        await bench.store.sweepStrayExecutions(uow, workflow.id);
        await bench.store.updateExecution(uow, execution, { state: 'in_progress', startedAt });
        return execution;
      });

      expect(bench.sent.shapes(mark)).toEqual([
        [
          'START TRANSACTION',
          'INSERT geneva_drive_step_executions',
          'UPDATE geneva_drive_step_executions',
          'UPDATE geneva_drive_step_executions',
          'COMMIT',
        ],
      ]);
      // In statement order: inserted scheduled, canceled by the sweep, then started by id.
      const row = await bench.execution(inserted.id);
      expect(row).toMatchObject({ state: 'in_progress', outcome: 'canceled', startedAt });
      expect(row.canceledAt).toBeInstanceOf(Date);
    });
  });

  describe('rollback and failure', () => {
    it('drops the pending writes of a transaction whose body throws, and sends ROLLBACK, not COMMIT', async () => {
      const workflow = await bench.newWorkflow();
      const execution = await bench.newExecution(workflow.id);

      const mark = bench.sent.mark();
      await expect(
        bench.hotPath(async (uow) => {
          const { execution: locked } = await bench.store.lockRows(uow, workflow.id, execution.id);
          await bench.store.updateExecution(uow, locked!, {
            state: 'in_progress',
            startedAt: new Date(),
          });
          await bench.store.insertExecution(uow, {
            workflowId: workflow.id,
            stepName: 'second',
            scheduledFor: new Date(),
          });
          throw new Error('step body failed');
        }),
      ).rejects.toThrow('step body failed');

      expect(bench.sent.shapes(mark)).toEqual([OPENING_AND_LOCKS, ['ROLLBACK']]);
      expect(await bench.execution(execution.id)).toMatchObject({
        state: 'scheduled',
        startedAt: null,
      });
      expect(
        await bench.store.executionsOfStep(bench.database.manager, workflow.id, 'second'),
      ).toEqual([]);
    });

    it('sends nothing at all for a transaction that throws before anything was sent', async () => {
      const workflow = await bench.newWorkflow();
      const execution = await bench.newExecution(workflow.id);

      const mark = bench.sent.mark();
      await expect(
        bench.hotPath(async (uow) => {
          await bench.store.updateExecution(uow, execution, {
            state: 'in_progress',
            startedAt: new Date(),
          });
          throw new Error('gave up');
        }),
      ).rejects.toThrow('gave up');

      expect(bench.sent.since(mark)).toEqual([]);
      expect(await bench.execution(execution.id)).toMatchObject({
        state: 'scheduled',
        startedAt: null,
      });
    });

    it('a failed message fails the transaction, and the connection prepares its statements again under new names', async () => {
      const workflow = await bench.newWorkflow();
      const active = await bench.newExecution(workflow.id, { state: 'scheduled' });
      const done = await bench.newExecution(workflow.id, {
        state: 'completed',
        outcome: 'success',
        stepName: 'zero',
      });
      // Reopening `done` while `active` is scheduled breaks the one-active-execution index.
      const reopen = { state: 'scheduled', outcome: null, finishedAt: null } as const;

      const mark = bench.sent.mark();
      const error = await bench
        .hotPath(async (uow) => {
          const { execution: locked } = await bench.store.lockRows(uow, workflow.id, done.id);
          await bench.store.updateExecution(uow, locked!, reopen);
        })
        .then(
          () => null,
          (caught: unknown) => caught,
        );

      expect(error).toBeInstanceOf(QueryFailedError);
      expect((error as QueryFailedError).driverError).toMatchObject({ code: '23505' });
      expect(isTransientDatabaseError(error)).toBe(false);
      expect(bench.sent.shapes(mark)).toEqual([
        OPENING_AND_LOCKS,
        ['UPDATE geneva_drive_step_executions', 'COMMIT'],
        ['ROLLBACK'],
      ]);
      const failed = bench.sent.since(mark)[1];
      // The premise: the failed message prepared the update before it failed, so that name now
      // exists on the server although the message as a whole failed.
      const failedName = /^PREPARE (geneva_drive_\d+_\d+) AS UPDATE/m.exec(failed.sql)?.[1];
      expect(failedName).toBeDefined();
      expect(await bench.execution(done.id)).toMatchObject({
        state: 'completed',
        outcome: 'success',
      });

      // The same statements again, on the same connection: they must not collide with the names
      // the failed message left behind.
      const retryMark = bench.sent.mark();
      await bench.hotPath(async (uow) => {
        const { execution: locked } = await bench.store.lockRows(uow, workflow.id, active.id);
        await bench.store.updateExecution(uow, locked!, {
          state: 'canceled',
          outcome: 'canceled',
          finishedAt: new Date(),
        });
        await bench.store.updateExecution(uow, done, reopen);
      });

      const retry = bench.sent.since(retryMark);
      expect(retry.map((message) => message.client)).toEqual([failed.client, failed.client]);
      const retryName = /^PREPARE (geneva_drive_\d+_\d+) AS UPDATE/m.exec(retry[1].sql)?.[1];
      expect(retryName).toBeDefined();
      expect(retryName).not.toBe(failedName);
      expect(retry[0].sql).toMatch(/^PREPARE geneva_drive_\d+_\d+ AS SELECT/m);
      expect(await bench.execution(active.id)).toMatchObject({ state: 'canceled' });
      expect(await bench.execution(done.id)).toMatchObject({
        state: 'scheduled',
        outcome: null,
        finishedAt: null,
      });
    });

    it('a lock read of a malformed id fails the transaction with the database error, and the next one works', async () => {
      const workflow = await bench.newWorkflow();
      const execution = await bench.newExecution(workflow.id);

      const error = await bench
        .hotPath((uow) => bench.store.lockRows(uow, workflow.id, 'not-a-uuid'))
        .then(
          () => null,
          (caught: unknown) => caught,
        );
      expect(error).toBeInstanceOf(QueryFailedError);
      expect((error as QueryFailedError).driverError).toMatchObject({ code: '22P02' });
      expect(isTransientDatabaseError(error)).toBe(false);

      const locked = await bench.hotPath((uow) =>
        bench.store.lockRows(uow, workflow.id, execution.id),
      );
      expect(locked.workflow?.id).toBe(workflow.id);
      expect(locked.execution?.id).toBe(execution.id);
    });

    it('after DEALLOCATE ALL the next transaction fails with a transient error, and the one after prepares again', async () => {
      const workflow = await bench.newWorkflow();
      const execution = await bench.newExecution(workflow.id);
      const lock = () =>
        bench.hotPath((uow) => bench.store.lockRows(uow, workflow.id, execution.id));
      const warmMark = bench.sent.mark();
      await lock(); // the connection has prepared the locking reads
      const warmClient = bench.sent.since(warmMark)[0].client;

      await deallocateOnEveryIdleConnection(bench.harness.dataSource);

      const mark = bench.sent.mark();
      const error = await lock().then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(QueryFailedError);
      expect((error as QueryFailedError).driverError).toMatchObject({ code: '26000' });
      expect(isTransientDatabaseError(error)).toBe(true);
      const [broken] = bench.sent.since(mark);
      expect(broken.client).toBe(warmClient);
      expect(broken.sql).not.toContain('PREPARE');

      const retryMark = bench.sent.mark();
      const locked = await lock();
      expect(locked.workflow?.id).toBe(workflow.id);
      expect(locked.execution?.id).toBe(execution.id);
      const [retry] = bench.sent.since(retryMark);
      expect(retry.client).toBe(warmClient);
      expect(retry.sql).toMatch(/^PREPARE geneva_drive_\d+_\d+ AS SELECT/m);
    });
  });
});

/**
 * Runs `DEALLOCATE ALL` on every idle client of the data source's pool (someone else's doing: a
 * pooler, an admin), then hands them back in the order they were in: pg-pool hands out the most
 * recently released client first.
 */
async function deallocateOnEveryIdleConnection(dataSource: DataSource): Promise<void> {
  const pool = (dataSource.driver as unknown as { master: PgPool }).master;
  const clients: PgPoolClient[] = [];
  for (let idle = pool.idleCount; idle > 0; idle--) clients.push(await pool.connect());
  for (const client of clients) await client.query('DEALLOCATE ALL');
  for (const client of clients.reverse()) client.release();
}

/**
 * With `preparedStatements: false` (PgBouncer in transaction mode, where a session's prepared
 * statements do not follow it) the batch must send the same statements with their values written
 * in, and no PREPARE or EXECUTE at all: one would fail on the next server connection.
 */
describeOn('postgres')('PostgresQueryBatch with preparedStatements: false (PostgreSQL)', () => {
  let bench: BatchBench;

  beforeAll(async () => {
    bench = await BatchBench.boot({ preparedStatements: false });
  });

  afterAll(() => bench?.close());

  it('sends no PREPARE or EXECUTE, inlines the values, and commits the same rows', async () => {
    const run = await finishStepAndScheduleNext(bench);
    expectStepFinishedAndNextScheduled(run);
    expect(
      run.messages.some((message) => /\b(PREPARE|EXECUTE|DEALLOCATE)\b/.test(message.sql)),
    ).toBe(false);
    const [lock, writes] = run.messages;
    expect(lock.sql).toContain(`= '${run.workflow.id}' FOR UPDATE`);
    expect(lock.sql).toContain(`= '${run.execution.id}' FOR UPDATE`);
    expect(writes.sql).toContain(`'${run.next.id}'`);
    expect(writes.sql).toContain(`'${run.done.toISOString()}'`);
  });

  it('a write-only transaction is still one message, with its values inlined', async () => {
    const workflow = await bench.newWorkflow();
    const execution = await bench.newExecution(workflow.id);
    const mark = bench.sent.mark();
    await bench.hotPath((uow) =>
      bench.store.updateExecution(uow, execution, { jobId: "job 'quoted'" }),
    );

    const [message, ...more] = bench.sent.since(mark);
    expect(more).toEqual([]);
    expect(message.sql).toMatch(
      /^START TRANSACTION;\nUPDATE .*"job_id" = 'job ''quoted''', .*;\nCOMMIT$/s,
    );
    expect(await bench.execution(execution.id)).toMatchObject({ jobId: "job 'quoted'" });
  });
});
