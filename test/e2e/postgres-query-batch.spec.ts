import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import { DataSource, QueryFailedError, type Logger } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import {
  GenevaDriveModule,
  StepExecutionEntity,
  WorkflowEntity,
  WorkflowAlreadyOngoingError,
  WorkflowNotFoundError,
  WorkflowNotOngoingError,
  type GenevaDriveModuleOptions,
} from '../../lib';
import { GenevaDriveDataSource } from '../../lib/adapters/typeorm/geneva-drive-data-source';
import { isTransientDatabaseError } from '../../lib/common/transient-database-error';
import type { UnitOfWork } from '../../lib/adapters/typeorm/unit-of-work';
import { WorkflowRows } from '../../lib/adapters/typeorm/workflow-rows';
import { HeroResolver } from '../../lib/adapters/typeorm/hero-resolver';
import { ThreeStepWorkflow } from '../fixtures/basic.workflows';
import { MatcherWorkflow, PaymentWorkflow } from '../fixtures/signal.workflows';
import { StepScript } from '../fixtures/step-script';
import { Order } from '../fixtures/order.entity';
import { StepJournal } from '../fixtures/step-journal';
import { postgresConnection, testDatabase, testPooler } from './support/database';
import { describeIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { openTestRedis, testPrefix } from './support/redis';
import {
  heldStatements,
  namePrefixOf,
  STATEMENT_NAME,
  type HeldStatement,
} from './support/pg-statements';
import { untilLockWaitOn } from './support/lock-wait';
import { placeholdersOf, splitStatements } from './support/sql-text';
import { nextJobId } from '../../lib/queue/job-id';
import { testTransport } from './support/transport';

/** A message the DataSource's logger saw: its SQL text, its bound values, the pg client it went on. */
interface SentMessage {
  sql: string;
  parameters: unknown[];
  client: PgClientLike | undefined;
}

/** What the tests read of a node-postgres client. */
interface PgClientLike {
  pipeline?: boolean;
}

/** The tables a statement's shape names. */
const TABLES = [
  'geneva_drive_workflows',
  'geneva_drive_step_executions',
  'geneva_drive_signals',
  'test_orders',
];

/**
 * Every message the DataSource sends, as its logger sees it: TypeORM logs each query before
 * sending it, and PostgresQueryBatch logs each of its messages as one `logQuery` call, statement
 * texts joined with ';\n' and every statement's values flattened as the parameters
 * (bench/support/sql-counter.ts wraps the logger likewise).
 */
class SentSql {
  private readonly messages: SentMessage[] = [];

  private constructor() {}

  static install(dataSource: DataSource): SentSql {
    const sent = new SentSql();
    const logger = dataSource.logger;
    const recording: Logger = Object.assign(Object.create(logger) as Logger, {
      logQuery: (...args: Parameters<Logger['logQuery']>) => {
        const [sql, parameters, queryRunner] = args;
        const client = (queryRunner as { databaseConnection?: PgClientLike } | undefined)
          ?.databaseConnection;
        sent.messages.push({
          sql,
          parameters: Array.isArray(parameters) ? parameters : [],
          client,
        });
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

  /** Each message since `mark` as its statements. */
  statements(mark: number): string[][] {
    return this.since(mark).map((message) => splitStatements(message.sql));
  }

  /**
   * Each message since `mark` as the shapes of its statements: `BEGIN` (with or without its
   * isolation level), `COMMIT`, `ROLLBACK`, or the verb and table (`UPDATE
   * geneva_drive_step_executions`), `FOR UPDATE` when locking.
   */
  shapes(mark: number): string[][] {
    return this.statements(mark).map((statements) => statements.map(shapeOf));
  }
}

function shapeOf(statement: string): string {
  const control = /^(BEGIN|COMMIT|ROLLBACK)\b/.exec(statement);
  if (control) return control[1];
  const verb =
    /^\s*(SELECT|INSERT|UPDATE|DELETE)\b/i.exec(statement)?.[1].toUpperCase() ?? statement;
  // The statement's own table is named first; a guard's subqueries name others after it.
  const table = TABLES.map((name) => ({ name, at: statement.indexOf(`"${name}"`) }))
    .filter(({ at }) => at >= 0)
    .sort((a, b) => a.at - b.at)[0]?.name;
  const lock = /\bFOR UPDATE\s*$/.test(statement) ? 'FOR UPDATE' : null;
  return [verb, table, lock].filter((part) => part).join(' ');
}

/** A list of state names the library writes as literals (`StateLiterals`): not a value. */
const STATE_LITERALS = /"state" IN \('[a-z_]+'(?:, '[a-z_]+')*\)/g;

/**
 * SPEC §16.1: no value is ever part of the SQL text. The text holds no string literal but the
 * library's own state names in a `"state" IN (…)` list, and its statements' placeholders account
 * for every value logged with it, in order.
 */
function expectOnlyBoundValues(message: SentMessage): void {
  const statements = splitStatements(message.sql);
  const placeholders = statements.reduce((sum, statement) => sum + placeholdersOf(statement), 0);
  const quoted = message.sql.replace(STATE_LITERALS, '').includes("'");
  expect({ sql: message.sql, quoted, placeholders }).toEqual({
    sql: message.sql,
    quoted: false,
    placeholders: message.parameters.length,
  });
}

type NewExecutionFields = Parameters<WorkflowRows['insertExecution']>[1];

const OPENING_AND_LOCKS = [
  'BEGIN',
  'SELECT geneva_drive_workflows FOR UPDATE',
  'SELECT geneva_drive_step_executions FOR UPDATE',
];

/** A value no SQL text may carry: a quote, a backslash, a semicolon, a newline, a placeholder. */
const AWKWARD = 'it\'s a \\ path;\n  next line "quoted" $1 ü';

/** One library instance (a GenevaDriveModule) on a DataSource, with the pieces the tests drive. */
interface LibraryInstance {
  database: GenevaDriveDataSource;
  store: WorkflowRows;
}

/** The library's pieces the tests drive directly, on one booted app. */
class BatchBench implements LibraryInstance {
  readonly database: GenevaDriveDataSource;
  readonly store: WorkflowRows;
  readonly heroes: HeroResolver;
  readonly sent: SentSql;
  /** Every statement text a hot-path transaction of this bench sent. */
  readonly hotPathTexts = new Set<string>();
  /** `gd_<instance>` of this app's library, once `learnStatementPrefix` ran. */
  private prefix: string | null = null;

  constructor(readonly harness: EngineHarness) {
    this.database = harness.get(GenevaDriveDataSource);
    this.store = harness.get(WorkflowRows);
    this.heroes = harness.get(HeroResolver);
    this.sent = SentSql.install(harness.dataSource);
  }

  /**
   * An app on a pool of ONE connection (`extra.max`), so every transaction and every check of
   * `pg_prepared_statements` is on the same server connection.
   */
  static async boot(
    options: GenevaDriveModuleOptions = {},
    extra: Record<string, unknown> = {},
  ): Promise<BatchBench> {
    const harness = await EngineHarness.boot({
      workflows: [ThreeStepWorkflow, PaymentWorkflow, MatcherWorkflow],
      providers: [StepJournal, StepScript],
      entities: [Order],
      options: { worker: false, ...options },
      extra: { max: 1, ...extra },
    });
    return new BatchBench(harness);
  }

  get dataSource(): DataSource {
    return this.harness.dataSource;
  }

  /**
   * A runner transaction (batched on PostgreSQL), by this app's library or `instance`. Whatever
   * it sent, every message must carry its values as bound parameters only.
   */
  async hotPath<T>(
    work: (uow: UnitOfWork) => Promise<T>,
    instance: LibraryInstance = this,
  ): Promise<T> {
    const mark = this.sent.mark();
    try {
      return await instance.database.transaction(work, undefined, { hotPath: true });
    } finally {
      const messages = this.sent.since(mark);
      for (const text of textsOf(messages)) this.hotPathTexts.add(text);
      for (const message of messages) expectOnlyBoundValues(message);
    }
  }

  /** A hot-path transaction expected to fail: resolves its error. */
  failingHotPath(work: (uow: UnitOfWork) => Promise<unknown>): Promise<unknown> {
    return this.hotPath(work).then(
      () => {
        throw new Error('the transaction was expected to fail');
      },
      (caught: unknown) => caught,
    );
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
    const execution = await this.database.manager.findOne(StepExecutionEntity, { where: { id } });
    if (!execution) throw new Error(`execution ${id} is gone`);
    return execution;
  }

  async workflow(id: string): Promise<WorkflowEntity> {
    // With the columns TypeORM leaves out by default (select: false), which the lock read carries.
    const workflow = await this.database.manager
      .createQueryBuilder(WorkflowEntity, 'workflow')
      .addSelect(['workflow.context', 'workflow.traceParent'])
      .where('workflow.id = :id', { id })
      .getOne();
    if (!workflow) throw new Error(`workflow ${id} is gone`);
    return workflow;
  }

  /**
   * That the pool's one connection is not left inside a transaction: a statement of its own
   * implicit transaction starts it (`now()` is the start of the transaction, not the statement).
   */
  async expectNoOpenTransaction(): Promise<void> {
    const [row] = await this.dataSource.query<Array<{ fresh: boolean }>>(
      'SELECT now() = statement_timestamp() AS fresh',
    );
    expect(row).toEqual({ fresh: true });
  }

  /** The named statements the (one) pooled connection holds now, of every library instance. */
  held(): Promise<HeldStatement[]> {
    return heldStatements(this.dataSource);
  }

  /**
   * With `preparedStatements: true`, on a connection that holds no statement yet: runs one
   * transaction and remembers the one name prefix the connection then holds, for `ownHeld`.
   */
  async learnStatementPrefix(): Promise<void> {
    expect(await this.held()).toEqual([]);
    await this.hotPath((uow) => this.store.lockRows(uow, uuidv7(), uuidv7()));
    const prefixes = new Set((await this.held()).map((held) => namePrefixOf(held.name)));
    expect(prefixes.size).toBe(1);
    this.prefix = [...prefixes][0];
  }

  /** The named statements of this app's library the connection holds now. */
  async ownHeld(): Promise<HeldStatement[]> {
    if (!this.prefix) throw new Error('learnStatementPrefix() first');
    const prefix = this.prefix;
    return (await this.held()).filter((held) => namePrefixOf(held.name) === prefix);
  }

  get statementPrefix(): string | null {
    return this.prefix;
  }

  close(): Promise<void> {
    return this.harness.close();
  }
}

/**
 * A second GenevaDriveModule (another app in the same process) on the bench's DataSource, hence
 * on the same pool and server connection.
 */
async function bootSecondInstance(
  bench: BatchBench,
  options: GenevaDriveModuleOptions,
): Promise<LibraryInstance & { close(): Promise<void> }> {
  const prefix = testPrefix();
  const redis = openTestRedis();
  const moduleRef = await Test.createTestingModule({
    imports: [
      GenevaDriveModule.forRoot({
        connection: redis.connection,
        prefix,
        worker: false,
        housekeeping: { enabled: false },
        ...options,
      }),
    ],
    providers: [{ provide: getDataSourceToken(), useValue: bench.dataSource }],
  }).compile();
  const app: INestApplication = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return {
    database: app.get(GenevaDriveDataSource),
    store: app.get(WorkflowRows),
    close: async () => {
      await app.close();
      const queue = new Queue('geneva-drive', {
        connection: redis.connection,
        prefix,
      });
      await queue.obliterate({ force: true });
      await queue.close();
      await redis.release();
    },
  };
}

/** The rows a finalize starts from, and what TypeORM's own reads return for them. */
async function stepInProgress(bench: BatchBench) {
  const workflow = await bench.newWorkflow({ stepJobOptions: { attempts: 3 }, note: AWKWARD });
  const execution = await bench.newExecution(workflow.id, {
    state: 'in_progress',
    startedAt: new Date('2026-04-01T08:00:00.001Z'),
    cursor: { page: 2, at: new Date('2026-04-01T07:59:59.999Z') },
  });
  return {
    workflow,
    execution,
    reference: {
      workflow: await bench.workflow(workflow.id),
      execution: await bench.execution(execution.id),
    },
  };
}

/**
 * What the runner's finalize does on success: lock both rows, complete the execution, insert the
 * next one, point the workflow at it. The locked rows must be what TypeORM's own reads return
 * (checked inside the transaction, before the changes). Resolves the rows it left and what was
 * sent.
 */
async function finishStepAndScheduleNext(bench: BatchBench, instance: LibraryInstance = bench) {
  const { workflow, execution, reference } = await stepInProgress(bench);
  const done = new Date('2026-04-01T08:00:01.234Z');
  const mark = bench.sent.mark();
  const next = await bench.hotPath(async (uow) => {
    const locked = await instance.store.lockRows(uow, workflow.id, execution.id);
    expect(locked.workflow).toStrictEqual(reference.workflow);
    expect(locked.execution).toStrictEqual(reference.execution);
    await instance.store.updateExecution(uow, locked.execution!, {
      state: 'completed',
      outcome: 'success',
      completedAt: done,
      finishedAt: done,
      jobId: AWKWARD,
      metadata: { user: { note: AWKWARD } },
    });
    const next = await instance.store.insertExecution(uow, {
      workflowId: workflow.id,
      stepName: AWKWARD,
      scheduledFor: done,
    });
    await instance.store.updateWorkflow(uow, locked.workflow!, {
      state: 'performing',
      nextStepName: AWKWARD,
    });
    return next;
  }, instance);
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

/** What every way of sending must send and commit for `finishStepAndScheduleNext`. */
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
    jobId: AWKWARD,
    metadata: { user: { note: AWKWARD } },
    cursor: { page: 2, at: new Date('2026-04-01T07:59:59.999Z') },
  });
  expect(run.rows.next).toMatchObject({
    id: run.next.id,
    workflowId: run.workflow.id,
    stepName: AWKWARD,
    state: 'scheduled',
    outcome: null,
    scheduledFor: run.done,
    jobId: run.next.id,
  });
  expect(run.rows.workflow).toMatchObject({
    state: 'performing',
    nextStepName: AWKWARD,
    metadata: { stepJobOptions: { attempts: 3 }, note: AWKWARD },
  });
}

/** The distinct statement texts of some messages. */
function textsOf(messages: readonly SentMessage[]): Set<string> {
  return new Set(messages.flatMap((message) => splitStatements(message.sql)));
}

/** The SQLSTATE of a database error, as TypeORM wraps it or as the driver raised it. */
function sqlState(error: unknown): unknown {
  const { driverError, code } = error as { driverError?: { code?: unknown }; code?: unknown };
  return driverError?.code ?? code;
}

/**
 * Two rows of one workflow and the change that breaks the one-active-execution index: reopening
 * `done` while `active` is scheduled. The failure comes from the COMMIT's message, where the
 * pending update is sent.
 */
async function uniqueViolation(bench: BatchBench) {
  const workflow = await bench.newWorkflow();
  const active = await bench.newExecution(workflow.id, { state: 'scheduled' });
  const done = await bench.newExecution(workflow.id, {
    state: 'completed',
    outcome: 'success',
    stepName: 'zero',
  });
  const reopen = { state: 'scheduled', outcome: null, finishedAt: null } as const;
  return {
    workflow,
    active,
    done,
    reopen,
    fail: () =>
      bench.failingHotPath(async (uow) => {
        const { execution } = await bench.store.lockRows(uow, workflow.id, done.id);
        await bench.store.updateExecution(uow, execution!, reopen);
      }),
  };
}

/**
 * The transactions every way of sending must run correctly: a finalize, a rollback, a failed
 * message and a failed read, each followed by a transaction that works on the same connection.
 */
function itRunsTheHotPathTransactions(bench: () => BatchBench): void {
  it('sends a finalize (lock, complete, insert the next, point the workflow at it) in two messages and commits it', async () => {
    const run = await finishStepAndScheduleNext(bench());
    expectStepFinishedAndNextScheduled(run);
  });

  it('drops the pending writes of a transaction whose body throws, and sends ROLLBACK, not COMMIT', async () => {
    const b = bench();
    const workflow = await b.newWorkflow();
    const execution = await b.newExecution(workflow.id);

    const mark = b.sent.mark();
    await expect(
      b.hotPath(async (uow) => {
        const { execution: locked } = await b.store.lockRows(uow, workflow.id, execution.id);
        await b.store.updateExecution(uow, locked!, {
          state: 'in_progress',
          startedAt: new Date(),
        });
        await b.store.insertExecution(uow, {
          workflowId: workflow.id,
          stepName: 'second',
          scheduledFor: new Date(),
        });
        throw new Error('step body failed');
      }),
    ).rejects.toThrow('step body failed');
    const sent = b.sent.shapes(mark);
    await b.expectNoOpenTransaction();

    expect(await b.execution(execution.id)).toMatchObject({
      state: 'scheduled',
      startedAt: null,
    });
    expect(await b.store.executionsOfStep(b.database.manager, workflow.id, 'second')).toEqual([]);
    expect(sent).toEqual([OPENING_AND_LOCKS, ['ROLLBACK']]);
  });

  it('a failed message fails the transaction with the database error, rolls back, and the next transaction on the pool works', async () => {
    const b = bench();
    const { workflow, active, done, reopen, fail } = await uniqueViolation(b);

    const mark = b.sent.mark();
    const error = await fail();
    expect(sqlState(error)).toBe('23505');
    expect(isTransientDatabaseError(error)).toBe(false);
    const sent = b.sent.shapes(mark);
    await b.expectNoOpenTransaction();
    const failedClient = b.sent.since(mark)[0].client;
    expect(await b.execution(done.id)).toMatchObject({ state: 'completed', outcome: 'success' });

    // The same statements again, on the same connection (the pool has one).
    const retryMark = b.sent.mark();
    await b.hotPath(async (uow) => {
      const { execution: locked } = await b.store.lockRows(uow, workflow.id, active.id);
      await b.store.updateExecution(uow, locked!, {
        state: 'canceled',
        outcome: 'canceled',
        finishedAt: new Date(),
      });
      await b.store.updateExecution(uow, done, reopen);
    });
    const retry = b.sent.since(retryMark);
    expect(retry.map((message) => message.client)).toEqual([failedClient, failedClient]);
    expect(await b.execution(active.id)).toMatchObject({ state: 'canceled' });
    expect(await b.execution(done.id)).toMatchObject({
      state: 'scheduled',
      outcome: null,
      finishedAt: null,
    });
    expect(sent).toEqual([
      OPENING_AND_LOCKS,
      ['UPDATE geneva_drive_step_executions', 'COMMIT'],
      ['ROLLBACK'],
    ]);
  });

  it('a lock read of a malformed id fails the transaction with the database error, and the next one works', async () => {
    const b = bench();
    const workflow = await b.newWorkflow();
    const execution = await b.newExecution(workflow.id);

    const mark = b.sent.mark();
    const error = await b.failingHotPath((uow) => b.store.lockRows(uow, workflow.id, 'not-a-uuid'));
    expect(sqlState(error)).toBe('22P02');
    expect(isTransientDatabaseError(error)).toBe(false);
    const sent = b.sent.shapes(mark);
    await b.expectNoOpenTransaction();

    const locked = await b.hotPath((uow) => b.store.lockRows(uow, workflow.id, execution.id));
    expect(locked.workflow?.id).toBe(workflow.id);
    expect(locked.execution?.id).toBe(execution.id);
    expect(sent).toEqual([OPENING_AND_LOCKS, ['ROLLBACK']]);
  });
}

/**
 * The named-statement behaviour (`preparedStatements: true`) every way of sending must keep:
 * statements parsed once per connection and reused, and a connection whose statements someone
 * else deallocated recovering after one failed transaction.
 */
function itReusesNamedStatements(bench: () => BatchBench): void {
  it('parses each statement once per connection and reuses it in the next transactions', async () => {
    const b = bench();
    await finishStepAndScheduleNext(b);
    const first = await b.ownHeld();
    const run = await finishStepAndScheduleNext(b);
    expectStepFinishedAndNextScheduled(run);
    const second = await b.ownHeld();

    // Every statement of the finalize is a named statement of this instance's...
    const texts = [...textsOf(run.messages)];
    expect(texts.length).toBeGreaterThan(0);
    const byText = new Map(second.map((held) => [held.statement, held]));
    for (const text of texts) expect(byText.get(text)?.name).toMatch(STATEMENT_NAME);
    // ...held once, parsed by the first finalize and not again (same names, same prepare time),
    // executed by both.
    expect(second.map(({ name, prepareTime }) => ({ name, prepareTime }))).toEqual(
      first.map(({ name, prepareTime }) => ({ name, prepareTime })),
    );
    expect(new Set(second.map((held) => held.statement)).size).toBe(second.length);
    for (const text of texts) {
      const before = first.find((held) => held.statement === text)!;
      expect(byText.get(text)!.executions).toBeGreaterThan(before.executions);
    }
  });

  it('after DEALLOCATE ALL on the connection the next transaction fails with a transient error (26000), and the one after works', async () => {
    const b = bench();
    const workflow = await b.newWorkflow();
    const execution = await b.newExecution(workflow.id);
    const lock = () => b.hotPath((uow) => b.store.lockRows(uow, workflow.id, execution.id));
    await lock(); // the connection holds the opening and the locking reads now
    expect((await b.ownHeld()).length).toBeGreaterThan(0);

    // Someone else's doing (a pooler, an admin), on the pool's one connection.
    await b.dataSource.query('DEALLOCATE ALL');
    expect(await b.held()).toEqual([]);

    const error = await lock().then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(sqlState(error)).toBe('26000');
    expect(isTransientDatabaseError(error)).toBe(true);

    const locked = await lock();
    expect(locked.workflow?.id).toBe(workflow.id);
    expect(locked.execution?.id).toBe(execution.id);
    expect((await b.ownHeld()).length).toBeGreaterThan(0);
    // And it keeps working.
    await expect(lock()).resolves.toMatchObject({ execution: { id: execution.id } });
  });
}

/**
 * On PostgreSQL the runner's transactions go through PostgresQueryBatch, which owns the
 * transaction on a pooled connection to save round trips: the opening waits for the first
 * statement, the store's writes wait for the next read of a library table or the COMMIT, an
 * update of the row inserted last joins its INSERT, and every message is one round trip of bound
 * statements. Each of these changes what reaches the database and when, so each is checked here
 * against the messages actually sent and the rows actually committed: a batch that sends writes
 * late, in the wrong order, or not at all loses or corrupts workflow state without any error.
 *
 * The connection-level checks (pg_prepared_statements, DEALLOCATE) need the same server
 * connection for the app and the check, which a transaction pooler does not give.
 *
 * The apps consume nothing (`worker: false`), so only the test's own transactions reach the one
 * connection: the local transport refuses that (it would leave every step unrun), and its
 * statements are those of any other transport, so its run skips this spec.
 */
const onThisRun = testDatabase === 'postgres' && testTransport !== 'local';
describeIf(onThisRun)('PostgresQueryBatch (PostgreSQL)', () => {
  describeIf(testPooler === null)('with default options', () => {
    let bench: BatchBench;

    beforeAll(async () => {
      bench = await BatchBench.boot();
    });

    afterAll(() => bench?.close());

    describe('a transaction that guesses its rows (lockRowsAsLeft)', () => {
      /** A workflow and its in-progress execution, and the rows as read back (the step's view). */
      async function runningStep() {
        const created = await bench.newWorkflow();
        const running = await bench.newExecution(created.id, { state: 'in_progress' });
        return {
          workflow: await bench.workflow(created.id),
          execution: await bench.execution(running.id),
          hero: null,
        };
      }

      /** Completes the execution in a hot-path transaction that guesses when it may. */
      async function complete(left: Awaited<ReturnType<typeof runningStep>>) {
        const runs: Array<'guessed' | 'read'> = [];
        await bench.hotPath(async (uow) => {
          const guessed = bench.store.lockRowsAsLeft(uow, left, null);
          runs.push(guessed ? 'guessed' : 'read');
          const { execution } =
            guessed ?? (await bench.store.lockRows(uow, left.workflow.id, left.execution.id));
          await bench.store.updateExecution(uow, execution!, {
            state: 'completed',
            outcome: 'success',
            metadata: { run: runs.length },
          });
        });
        return runs;
      }

      /** The fence (its subqueries lock the rows) names the workflows table first. */
      const FENCED = [
        'BEGIN',
        'SELECT geneva_drive_workflows',
        'UPDATE geneva_drive_step_executions',
        'COMMIT',
      ];

      it('rows as left: one message (the fence taking the locks, the fenced write, COMMIT), and the write lands', async () => {
        const left = await runningStep();

        const mark = bench.sent.mark();
        expect(await complete(left)).toEqual(['guessed']);

        expect(bench.sent.shapes(mark)).toEqual([FENCED]);
        const [fence, write] = bench.sent.statements(mark)[0].slice(1, 3);
        expect(fence).toMatch(
          /^SELECT set_config\(\$\d+, CASE WHEN .* THEN \$\d+ ELSE \$\d+ END, true\) AS "fence"$/,
        );
        // The workflow's lock first, then the execution's, each inside the check of its row.
        expect(fence).toMatch(
          /^SELECT set_config\(\$\d+, CASE WHEN EXISTS \(SELECT 1 FROM \S*"geneva_drive_workflows" WHERE [^)]* FOR UPDATE\) AND EXISTS \(SELECT 1 FROM \S*"geneva_drive_step_executions" WHERE [^)]* FOR UPDATE\) THEN /,
        );
        expect(write).toMatch(/ AND current_setting\(\$\d+, true\) = \$\d+$/);
        expect(await bench.execution(left.execution.id)).toMatchObject({
          state: 'completed',
          metadata: { run: 1 },
        });
        await bench.expectNoOpenTransaction();
      });

      it('rows changed meanwhile: nothing of the guess lands, and the work runs again reading first', async () => {
        const left = await runningStep();
        const changedAt = new Date(left.execution.updatedAt.getTime() + 1);
        await bench.database.manager.update(
          StepExecutionEntity,
          { id: left.execution.id },
          { updatedAt: changedAt },
        );

        const mark = bench.sent.mark();
        expect(await complete(left)).toEqual(['guessed', 'read']);

        expect(bench.sent.shapes(mark)).toEqual([
          FENCED,
          OPENING_AND_LOCKS,
          ['UPDATE geneva_drive_step_executions', 'COMMIT'],
        ]);
        // The second run's write, not the first's.
        expect(await bench.execution(left.execution.id)).toMatchObject({
          state: 'completed',
          metadata: { run: 2 },
        });
        await bench.expectNoOpenTransaction();
      });

      it("a guessing transaction refuses TypeORM's manager, whose statements would not be fenced", async () => {
        const left = await runningStep();
        await bench.hotPath(async (uow) => {
          expect(bench.store.lockRowsAsLeft(uow, left, null)).not.toBeNull();
          await expect(uow.manager()).rejects.toThrow(/writes through its batch only/);
        });
        await bench.expectNoOpenTransaction();
      });
    });

    describe('round trips', () => {
      it('sends nothing for a hot-path transaction that makes no statement', async () => {
        const mark = bench.sent.mark();
        await expect(bench.hotPath(() => Promise.resolve('nothing to do'))).resolves.toBe(
          'nothing to do',
        );
        expect(bench.sent.since(mark)).toEqual([]);
      });

      it('sends a transaction whose only work is a write as one message: BEGIN; the write; COMMIT', async () => {
        const workflow = await bench.newWorkflow();
        const execution = await bench.newExecution(workflow.id);
        const startedAt = new Date('2026-03-01T10:00:00.123Z');

        const mark = bench.sent.mark();
        await bench.hotPath((uow) =>
          bench.store.updateExecution(uow, execution, { state: 'in_progress', startedAt }),
        );

        expect(bench.sent.shapes(mark)).toEqual([
          ['BEGIN', 'UPDATE geneva_drive_step_executions', 'COMMIT'],
        ]);
        const [message] = bench.sent.since(mark);
        expect(message.parameters).toEqual(
          expect.arrayContaining(['in_progress', startedAt.toISOString(), execution.id]),
        );
        expect(await bench.execution(execution.id)).toMatchObject({
          state: 'in_progress',
          startedAt,
        });
      });

      it("lockRows sends the opening and both locking reads in one message and returns what TypeORM's own reads return", async () => {
        const metadata = {
          stepJobOptions: { attempts: 3 },
          list: [1, 'two', null, true, 2.5],
          note: AWKWARD,
        };
        const workflow = await bench.newWorkflow(metadata);
        const cursorAt = new Date('2026-02-03T04:05:06.789Z');
        const execution = await bench.newExecution(workflow.id, {
          state: 'in_progress',
          startedAt: new Date('2026-02-03T04:05:00.001Z'),
          metadata: { user: { nested: { quote: "'", slash: '\\' } } },
          cursor: { page: 2, at: cursorAt, list: [new Date(0), 'x'] },
        });
        const reference = {
          workflow: await bench.workflow(workflow.id),
          execution: await bench.execution(execution.id),
        };

        const mark = bench.sent.mark();
        const locked = await bench.hotPath((uow) =>
          bench.store.lockRows(uow, workflow.id, execution.id),
        );

        expect(bench.sent.shapes(mark)).toEqual([OPENING_AND_LOCKS, ['COMMIT']]);
        expect(bench.sent.since(mark)[0].parameters).toEqual([workflow.id, execution.id]);
        expect(locked.workflow).toBeInstanceOf(WorkflowEntity);
        expect(locked.execution).toBeInstanceOf(StepExecutionEntity);
        expect(locked.workflow).toStrictEqual(reference.workflow);
        expect(locked.execution).toStrictEqual(reference.execution);
        // The premise of the comparison: TypeORM's rows carry Dates and parsed JSON.
        expect(locked.workflow!.createdAt).toBeInstanceOf(Date);
        expect(locked.workflow!.createdAt).toEqual(workflow.createdAt);
        expect(locked.workflow!.allowMultiple).toBe(false);
        expect(locked.workflow!.metadata).toEqual(metadata);
        expect(locked.execution!.startedAt).toEqual(new Date('2026-02-03T04:05:00.001Z'));
        expect(locked.execution!.scheduledFor).toEqual(execution.scheduledFor);
        expect(locked.execution!.cursor).toEqual({
          page: 2,
          at: cursorAt,
          list: [new Date(0), 'x'],
        });
        expect((locked.execution!.cursor as { at: unknown }).at).toBeInstanceOf(Date);
      });

      it('lockRows resolves null for rows that do not exist', async () => {
        const locked = await bench.hotPath((uow) => bench.store.lockRows(uow, uuidv7(), uuidv7()));
        expect(locked).toEqual({ workflow: null, execution: null });
      });

      it('sends a finalize (lock, complete, insert the next, point the workflow at it) in two messages', async () => {
        expectStepFinishedAndNextScheduled(await finishStepAndScheduleNext(bench));
      });
    });

    describe('signal()', () => {
      /** A workflow of `type` parked at its `waitFor` step (its steps run here: no worker). */
      async function parked(type: typeof PaymentWorkflow | typeof MatcherWorkflow, status = 'new') {
        const { harness } = bench;
        const hero = await harness.dataSource.getRepository(Order).save({ status });
        const workflow = await harness.service.start(type, { hero });
        for (let step = 0; step < 3; step++) {
          const current = await harness.service.currentExecution(workflow.id);
          if (current?.state === 'waiting') return { workflow, execution: current };
          await harness.runner.performStep(current!.id);
        }
        throw new Error(`${type.name} did not park`);
      }

      /** The one message of a delivery that decides itself (`deliverSignalAtOnce`). */
      const AT_ONCE = (withDuplicateLookup: boolean, withWake = true) => [
        'BEGIN',
        'SELECT geneva_drive_workflows FOR UPDATE',
        ...(withDuplicateLookup ? ['SELECT geneva_drive_signals'] : []),
        ...(withWake ? ['UPDATE geneva_drive_step_executions'] : []),
        'INSERT geneva_drive_signals',
        'COMMIT',
      ];

      it('wakes a parked step in one message: the lock, the duplicate lookup and the guarded writes with the COMMIT', async () => {
        const { workflow, execution } = await parked(PaymentWorkflow);
        const mark = bench.sent.mark();
        const signal = await bench.harness.service.signal(workflow.id, 'payment', {
          idempotencyKey: 'k-1',
          payload: { note: AWKWARD },
        });

        expect(bench.sent.shapes(mark)).toEqual([AT_ONCE(true)]);
        for (const message of bench.sent.since(mark)) expect(message.sql).not.toContain(AWKWARD);
        const woken = await bench.execution(execution.id);
        expect(woken).toMatchObject({
          state: 'scheduled',
          signalId: signal.id,
          waitingSince: null,
          jobId: nextJobId(execution.id, execution.jobId),
        });
        expect(woken.scheduledFor.getTime()).toBeGreaterThan(execution.scheduledFor.getTime());
        const [stored] = await bench.harness.service.signals(workflow.id);
        expect(stored).toMatchObject({
          id: signal.id,
          state: 'claimed',
          claimed: 1,
          consumed: 0,
          idempotencyKey: 'k-1',
          payload: { note: AWKWARD },
        });
        // What signal() resolved is the row as stored.
        expect({ ...signal }).toEqual({ ...stored });

        const again = bench.sent.mark();
        const duplicate = await bench.harness.service.signal(workflow.id, 'payment', {
          idempotencyKey: 'k-1',
          payload: { note: 'second' },
        });
        expect(duplicate).toMatchObject({ id: signal.id, duplicateDelivery: true });
        expect(duplicate.payload).toEqual({ note: AWKWARD });
        expect(bench.sent.shapes(again)).toEqual([AT_ONCE(true)]);
        expect(await bench.harness.service.signals(workflow.id)).toEqual([
          expect.objectContaining({ id: signal.id, state: 'claimed', claimed: 1 }),
        ]);
        expect(await bench.execution(execution.id)).toEqual(woken);
      });

      it('waits for the workflow lock: an execution that parks while the delivery waits for it is woken', async () => {
        const { harness, dataSource } = bench;
        const hero = await dataSource.getRepository(Order).save({ status: 'new' });
        const workflow = await harness.service.start(PaymentWorkflow, { hero });
        await harness.runner.performStep((await harness.service.currentExecution(workflow.id))!.id);
        const capture = (await harness.service.currentExecution(workflow.id))!;
        expect(capture).toMatchObject({ stepName: 'capture', state: 'scheduled' });

        // A gate holding the workflow lock, as a prepare does, that finds no signal and parks; on
        // connections of its own (the app's pool has one).
        const own = await new DataSource({ ...postgresConnection, extra: { max: 2 } }).initialize();
        const gate = own.createQueryRunner();
        try {
          const workflows = dataSource.getMetadata(WorkflowEntity).tablePath;
          const executions = dataSource.getMetadata(StepExecutionEntity).tablePath;
          await gate.startTransaction();
          await gate.query(`SELECT 1 FROM ${workflows} WHERE id = $1 FOR UPDATE`, [workflow.id]);
          const backend: unknown = await gate.query('SELECT pg_backend_pid() AS pid');
          const [{ pid }] = backend as Array<{ pid: number }>;
          const delivered = harness.service.signal(workflow.id, 'payment');
          await untilLockWaitOn(own, pid);
          await gate.query(
            `UPDATE ${executions} SET state = 'waiting', waiting_since = now() WHERE id = $1`,
            [capture.id],
          );
          await gate.commitTransaction();
          const signal = await delivered;

          expect(signal).toMatchObject({ state: 'claimed', claimed: 1 });
          expect(await bench.execution(capture.id)).toMatchObject({
            state: 'scheduled',
            signalId: signal.id,
          });
        } finally {
          await gate.release();
          await own.destroy();
        }
      });

      it("the woken execution's next job id is nextJobId()'s, whatever job id the row held", async () => {
        for (const suffix of [null, '', '_7', '_41', '_x', '_1_2', 'X3']) {
          const { execution } = await parked(PaymentWorkflow);
          const held = suffix === null ? null : `${execution.id}${suffix}`;
          await bench.dataSource.manager.update(StepExecutionEntity, execution.id, { jobId: held });
          await bench.harness.service.signal(execution.workflowId, 'payment');
          expect((await bench.execution(execution.id)).jobId).toBe(nextJobId(execution.id, held));
        }
      });

      it('a signal no step waits for is buffered in one message without a wake', async () => {
        const { workflow, execution } = await parked(PaymentWorkflow);
        const mark = bench.sent.mark();
        const signal = await bench.harness.service.signal(workflow.id, 'refund', {
          idempotencyKey: 'r-1',
        });
        expect(bench.sent.shapes(mark)).toEqual([AT_ONCE(true, false)]);
        expect(signal).toMatchObject({ name: 'refund', state: 'pending', claimed: 0 });
        expect(await bench.execution(execution.id)).toMatchObject({
          state: 'waiting',
          signalId: null,
        });
        expect(await bench.harness.service.signals(workflow.id)).toEqual([
          expect.objectContaining({ id: signal.id, state: 'pending', claimed: 0, claimedAt: null }),
        ]);
        const again = await bench.harness.service.signal(workflow.id, 'refund', {
          idempotencyKey: 'r-1',
        });
        expect(again).toMatchObject({ id: signal.id, duplicateDelivery: true });
      });

      it('buffers a signal to a paused workflow in one message, its parked step left waiting', async () => {
        const { workflow, execution } = await parked(PaymentWorkflow);
        await bench.harness.service.pause(workflow.id);
        const mark = bench.sent.mark();
        const signal = await bench.harness.service.signal(workflow.id, 'payment');
        expect(bench.sent.shapes(mark)).toEqual([AT_ONCE(false)]);
        expect(signal).toMatchObject({ state: 'pending', claimed: 0 });
        expect(await bench.execution(execution.id)).toMatchObject({
          state: 'waiting',
          signalId: null,
        });
        expect(await bench.harness.service.signals(workflow.id)).toEqual([
          expect.objectContaining({ id: signal.id, state: 'pending', claimed: 0 }),
        ]);
      });

      it('refuses a finished or canceled workflow and an unknown id in one message that writes nothing', async () => {
        const { workflow } = await parked(PaymentWorkflow);
        await bench.harness.service.cancel(workflow.id);
        const mark = bench.sent.mark();
        await expect(bench.harness.service.signal(workflow.id, 'payment')).rejects.toThrow(
          WorkflowNotOngoingError,
        );
        expect(bench.sent.shapes(mark)).toEqual([AT_ONCE(false)]);
        expect(await bench.harness.service.signals(workflow.id)).toEqual([]);

        await expect(bench.harness.service.signal(uuidv7(), 'payment')).rejects.toThrow(
          WorkflowNotFoundError,
        );
      });

      it('a workflow parked where a matcher must run: the at-once message writes nothing, then the delivery is decided under the lock', async () => {
        const { workflow, execution } = await parked(MatcherWorkflow, 'big');
        const small = bench.sent.mark();
        await bench.harness.service.signal(workflow.id, 'payment', { payload: { amount: 5 } });
        expect(bench.sent.shapes(small)).toEqual([
          AT_ONCE(false),
          [
            'BEGIN',
            'SELECT geneva_drive_workflows FOR UPDATE',
            'SELECT geneva_drive_step_executions',
          ],
          ['SELECT test_orders'],
          ['INSERT geneva_drive_signals', 'COMMIT'],
        ]);
        expect(await bench.execution(execution.id)).toMatchObject({ state: 'waiting' });
        expect(await bench.harness.service.signals(workflow.id)).toHaveLength(1);

        await bench.harness.service.signal(workflow.id, 'payment', { payload: { amount: 500 } });
        expect(await bench.execution(execution.id)).toMatchObject({ state: 'scheduled' });
        expect(
          (await bench.harness.service.signals(workflow.id)).map(({ state, claimed }) => ({
            state,
            claimed,
          })),
        ).toEqual([
          { state: 'pending', claimed: 0 },
          { state: 'claimed', claimed: 1 },
        ]);
      });

      it("a signal no parked step's matcher has to run for goes at once, even beside such matchers elsewhere", async () => {
        // MatcherWorkflow's predicate waits for 'payment' too; PaymentWorkflow's plain step does not need it.
        const { workflow: matching } = await parked(MatcherWorkflow, 'big');
        const { workflow, execution } = await parked(PaymentWorkflow);
        const mark = bench.sent.mark();
        await bench.harness.service.signal(workflow.id, 'payment');
        expect(bench.sent.shapes(mark)).toEqual([AT_ONCE(false)]);
        expect(await bench.execution(execution.id)).toMatchObject({ state: 'scheduled' });
        expect(await bench.harness.service.signals(matching.id)).toEqual([]);
      });

      it("inside a caller's transaction the delivery is decided under the lock, through TypeORM", async () => {
        const { workflow, execution } = await parked(PaymentWorkflow);
        const signal = await bench.dataSource.transaction((manager) =>
          bench.harness.service.signal(workflow.id, 'payment', { manager }),
        );
        expect(await bench.execution(execution.id)).toMatchObject({
          state: 'scheduled',
          signalId: signal.id,
        });
        expect(signal).toMatchObject({ state: 'claimed', claimed: 1 });
      });
    });

    describe('start()', () => {
      it('writes the workflow and its first execution in one message, with the COMMIT, values bound', async () => {
        const { harness, dataSource } = bench;
        const hero = await dataSource.getRepository(Order).save({ status: 'new' });
        const mark = bench.sent.mark();
        const workflow = await harness.service.start(ThreeStepWorkflow, {
          hero,
          metadata: { note: AWKWARD },
        });

        expect(bench.sent.shapes(mark)).toEqual([
          [
            'BEGIN',
            'INSERT geneva_drive_workflows',
            'UPDATE geneva_drive_step_executions',
            'INSERT geneva_drive_step_executions',
            'COMMIT',
          ],
        ]);
        for (const message of bench.sent.since(mark)) expectOnlyBoundValues(message);
        // The first execution's update of next_step_name joined the workflow's INSERT.
        expect(await bench.workflow(workflow.id)).toMatchObject({
          state: 'ready',
          nextStepName: 'first',
          metadata: { note: AWKWARD },
        });
        expect(await harness.service.currentExecution(workflow.id)).toMatchObject({
          stepName: 'first',
          state: 'scheduled',
        });
      });

      it('names only the columns a new row sets: the ones it leaves NULL are left out, and read back NULL', async () => {
        const { harness } = bench;
        const mark = bench.sent.mark();
        const workflow = await harness.service.start(ThreeStepWorkflow, {});

        const [, insertWorkflow, , insertExecution] = bench.sent.statements(mark)[0];
        const columnsOf = (insert: string) =>
          /^INSERT INTO \S+ \(([^)]*)\)/
            .exec(insert)![1]
            .split(', ')
            .map((quoted) => quoted.replace(/"/g, ''));
        expect(columnsOf(insertExecution).sort()).toEqual(
          [
            'id',
            'workflow_id',
            'step_name',
            'state',
            'scheduled_for',
            'job_id',
            'created_at',
            'updated_at',
            // A column with a transformer is always named: its `to()` decides what NULL becomes.
            'cursor',
          ].sort(),
        );
        // No hero, no metadata: neither is named; `allow_multiple` (a default) and the state are.
        for (const column of ['hero_type', 'hero_id', 'metadata', 'current_step_name'])
          expect(columnsOf(insertWorkflow)).not.toContain(column);
        expect(columnsOf(insertWorkflow)).toEqual(
          expect.arrayContaining(['state', 'allow_multiple', 'next_step_name']),
        );
        expect(await bench.workflow(workflow.id)).toMatchObject({
          heroType: null,
          heroId: null,
          metadata: null,
          currentStepName: null,
          allowMultiple: false,
        });
        expect(await harness.service.currentExecution(workflow.id)).toMatchObject({
          outcome: null,
          startedAt: null,
          metadata: null,
          cursor: null,
          continuesFromId: null,
          signalId: null,
        });
      });

      it('refuses a second ongoing workflow for the hero at the COMMIT: WorkflowAlreadyOngoingError, nothing written, nothing enqueued', async () => {
        const { harness, dataSource } = bench;
        const hero = await dataSource.getRepository(Order).save({ status: 'new' });
        const first = await harness.service.start(ThreeStepWorkflow, { hero });
        const jobs = await harness.queue().count();

        await expect(harness.service.start(ThreeStepWorkflow, { hero })).rejects.toBeInstanceOf(
          WorkflowAlreadyOngoingError,
        );
        expect(await harness.service.list({ workflow: ThreeStepWorkflow, hero })).toEqual([
          expect.objectContaining({ id: first.id }),
        ]);
        expect(await harness.queue().count()).toBe(jobs);
        await bench.expectNoOpenTransaction();
      });
    });

    describe('values', () => {
      it('are only bound parameters: each message carries them as parameters and its SQL text contains none', async () => {
        const run = await finishStepAndScheduleNext(bench);
        expectStepFinishedAndNextScheduled(run);
        const [lock, writes] = run.messages;
        expect(lock.parameters).toEqual([run.workflow.id, run.execution.id]);
        // jobId and stepName as they are, the metadata as JSON text of the jsonb/json column.
        expect(writes.parameters).toEqual(
          expect.arrayContaining([
            AWKWARD,
            JSON.stringify({ user: { note: AWKWARD } }),
            run.next.id,
            run.done.toISOString(),
          ]),
        );
        expect(writes.parameters.filter((value) => value === AWKWARD)).toHaveLength(3);
        for (const message of run.messages) {
          for (const value of [AWKWARD, "it's", '\\', run.workflow.id, run.execution.id]) {
            expect(message.sql).not.toContain(value);
          }
          expect(message.sql).not.toContain(run.next.id);
          expect(message.sql).not.toContain(run.done.toISOString());
        }
      });
    });

    describe('pending writes', () => {
      it('are sent before a later read of a library table through uow.manager(), which sees them', async () => {
        const workflow = await bench.newWorkflow();
        const execution = await bench.newExecution(workflow.id);
        const startedAt = new Date('2026-03-02T09:00:00.000Z');

        const mark = bench.sent.mark();
        const reread = await bench.hotPath(async (uow) => {
          const { execution: locked } = await bench.store.lockRows(uow, workflow.id, execution.id);
          await bench.store.updateExecution(uow, locked!, { state: 'in_progress', startedAt });
          return bench.store.findExecution(await uow.manager(), execution.id);
        });

        expect(reread).toMatchObject({ state: 'in_progress', startedAt });
        expect(bench.sent.shapes(mark)).toEqual([
          OPENING_AND_LOCKS,
          ['UPDATE geneva_drive_step_executions'],
          ['SELECT geneva_drive_step_executions'],
          ['COMMIT'],
        ]);
        const messages = bench.sent.since(mark);
        expect(messages[2].client).toBe(messages[0].client);
        expect(await bench.execution(execution.id)).toMatchObject({
          state: 'in_progress',
          startedAt,
        });
      });

      it('stay pending through a hero read (uow.managerForOtherTables), which only opens the transaction, and travel with the COMMIT', async () => {
        const order = await bench.dataSource.getRepository(Order).save({ status: 'paid' });
        const workflow = await bench.newWorkflow();
        const execution = await bench.newExecution(workflow.id);

        const mark = bench.sent.mark();
        const hero = await bench.hotPath(async (uow) => {
          await bench.store.updateExecution(uow, execution, {
            state: 'in_progress',
            startedAt: new Date(),
          });
          return bench.heroes.load(uow, 'Order', String(order.id));
        });

        expect(hero).toBeInstanceOf(Order);
        expect(hero).toEqual(order);
        expect(bench.sent.shapes(mark)).toEqual([
          ['BEGIN'],
          ['SELECT test_orders'],
          ['UPDATE geneva_drive_step_executions', 'COMMIT'],
        ]);
        const messages = bench.sent.since(mark);
        expect(messages.map((message) => message.client)).toEqual(
          messages.map(() => messages[0].client),
        );
        expect(await bench.execution(execution.id)).toMatchObject({ state: 'in_progress' });
      });

      it('an update by id of the row inserted last joins its INSERT; one of a row inserted before it does not', async () => {
        const workflow = await bench.newWorkflow();
        const scheduledFor = new Date('2026-03-03T00:00:00.000Z');
        const startedAt = new Date('2026-03-03T00:00:00.500Z');

        const mark = bench.sent.mark();
        const { first, last } = await bench.hotPath(async (uow) => {
          const first = await bench.store.insertExecution(uow, {
            workflowId: workflow.id,
            stepName: 'zero',
            scheduledFor,
            state: 'completed',
            outcome: 'success',
          });
          const last = await bench.store.insertExecution(uow, {
            workflowId: workflow.id,
            stepName: 'second',
            scheduledFor,
          });
          await bench.store.updateExecution(uow, last, { state: 'in_progress', startedAt });
          await bench.store.updateExecution(uow, first, { errorMessage: 'late note' });
          return { first, last };
        });

        expect(bench.sent.shapes(mark)).toEqual([
          [
            'BEGIN',
            'INSERT geneva_drive_step_executions',
            'INSERT geneva_drive_step_executions',
            'UPDATE geneva_drive_step_executions',
            'COMMIT',
          ],
        ]);
        const [message] = bench.sent.since(mark);
        // The joined INSERT carries the update's values instead of the inserted ones.
        expect(message.parameters).toContain('in_progress');
        expect(message.parameters).toContain(startedAt.toISOString());
        expect(message.parameters).not.toContain('scheduled');
        expect(message.parameters.slice(-1)).toEqual([first.id]);
        expect(await bench.execution(last.id)).toMatchObject({
          state: 'in_progress',
          startedAt,
          stepName: 'second',
          scheduledFor,
        });
        expect(await bench.execution(first.id)).toMatchObject({
          state: 'completed',
          errorMessage: 'late note',
        });
      });

      it('an update by id does not join the INSERT past an update of another row of that table: a unique index may tie the two', async () => {
        // One active (scheduled or in progress) execution per workflow: A waits, B is active; B
        // is canceled, then A scheduled. Joined, the INSERT of A as scheduled would precede B's
        // cancel and break the index.
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
          await bench.store.updateExecution(uow, active, {
            state: 'canceled',
            outcome: 'canceled',
          });
          await bench.store.updateExecution(uow, waiting, { state: 'scheduled' });
          return waiting;
        });

        expect(bench.sent.shapes(mark)).toEqual([
          [
            'BEGIN',
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
          await bench.store.updateExecution(uow, execution, {
            state: 'in_progress',
            startedAt,
          });
          return execution;
        });

        expect(bench.sent.shapes(mark)).toEqual([
          [
            'BEGIN',
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
      itRunsTheHotPathTransactions(() => bench);

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

      it('a failed message fails the transaction with a QueryFailedError, as TypeORM reports database errors', async () => {
        // The runner tells a failed query (the transaction is unusable) from user code's
        // exceptions by `instanceof QueryFailedError` (step-finalizer's startInProcess).
        const { fail } = await uniqueViolation(bench);
        const error = await fail();
        expect(error).toBeInstanceOf(QueryFailedError);
        expect((error as QueryFailedError).driverError).toMatchObject({ code: '23505' });
      });
    });

    describe('named statements', () => {
      it('leaves no prepared statement on the connection (PgBouncer in transaction mode): unnamed statements only', async () => {
        await finishStepAndScheduleNext(bench);
        await (await uniqueViolation(bench)).fail();
        await bench.failingHotPath((uow) => bench.store.lockRows(uow, uuidv7(), 'not-a-uuid'));
        const workflow = await bench.newWorkflow();
        await bench.hotPath((uow) => bench.store.lockRows(uow, workflow.id, uuidv7()));

        // The pool has one connection: the one all these transactions ran on.
        expect(await bench.held()).toEqual([]);
      });
    });
  });

  describeIf(testPooler === null)('with preparedStatements: true', () => {
    let bench: BatchBench;

    beforeAll(async () => {
      bench = await BatchBench.boot({ preparedStatements: true });
      await bench.learnStatementPrefix();
    });

    afterAll(() => bench?.close());

    it('runs every statement as a protocol-level named statement gd_<instance>_<n>, its text as sent', async () => {
      const run = await finishStepAndScheduleNext(bench);
      expectStepFinishedAndNextScheduled(run);
      const held = await bench.ownHeld();
      const texts = [...textsOf(run.messages)];
      expect(held.map((statement) => statement.statement)).toEqual(expect.arrayContaining(texts));
      for (const statement of held) expect(statement.name).toMatch(STATEMENT_NAME);
      // Protocol-level (Parse), not SQL-level PREPARE.
      expect(held.filter((statement) => statement.fromSql)).toEqual([]);
    });

    itRunsTheHotPathTransactions(() => bench);

    it('two library instances on one DataSource and connection use distinct names and do not collide', async () => {
      const other = await bootSecondInstance(bench, { preparedStatements: true });
      try {
        // Interleaved, the same statement texts from both, on the pool's one connection.
        const runs = [];
        for (let round = 0; round < 2; round++) {
          runs.push(await finishStepAndScheduleNext(bench, other));
          runs.push(await finishStepAndScheduleNext(bench));
        }
        for (const run of runs) expectStepFinishedAndNextScheduled(run);
        const messages = runs.flatMap((run) => run.messages);
        expect(new Set(messages.map((message) => message.client)).size).toBe(1);

        const held = await bench.held();
        // Each finalize statement is held once under each instance's name, one of them ours.
        for (const text of textsOf(messages)) {
          const prefixes = held
            .filter((statement) => statement.statement === text)
            .map((statement) => namePrefixOf(statement.name));
          expect(prefixes).toHaveLength(2);
          expect(new Set(prefixes).size).toBe(2);
          expect(prefixes).toContain(bench.statementPrefix);
        }
      } finally {
        await other.close();
      }
    });

    it('50 failed messages leave at most one named statement per distinct statement text (no leak)', async () => {
      const { workflow, done, reopen } = await uniqueViolation(bench);
      const messages: SentMessage[] = [];
      for (let attempt = 0; attempt < 50; attempt++) {
        const mark = bench.sent.mark();
        const error =
          attempt % 2 === 0
            ? await bench.failingHotPath(async (uow) => {
                const { execution } = await bench.store.lockRows(uow, workflow.id, done.id);
                await bench.store.updateExecution(uow, execution!, reopen);
              })
            : await bench.failingHotPath((uow) =>
                bench.store.lockRows(uow, workflow.id, 'not-a-uuid'),
              );
        messages.push(...bench.sent.since(mark));
        // Each failure is the statement's own, never a name collision (42P05) or a missing name.
        expect(sqlState(error)).toBe(attempt % 2 === 0 ? '23505' : '22P02');
      }
      const held = await bench.ownHeld();
      const heldTexts = held.map((statement) => statement.statement);
      expect(new Set(heldTexts).size).toBe(held.length);
      for (const text of textsOf(messages)) expect(heldTexts).toContain(text);
      // Every statement the library sent on this connection, in every test so far (ROLLBACK
      // added: it is the statement texts that count here, whether or not they were logged).
      expect(held.length).toBeLessThanOrEqual(new Set([...bench.hotPathTexts, 'ROLLBACK']).size);

      // And the connection still works, with the same names.
      const locked = await bench.hotPath((uow) => bench.store.lockRows(uow, workflow.id, done.id));
      expect(locked.execution?.id).toBe(done.id);
      expect((await bench.ownHeld()).map((statement) => statement.name)).toEqual(
        held.map((statement) => statement.name),
      );
    });

    // Last: DEALLOCATE ALL also drops the names the other tests count on.
    itReusesNamedStatements(() => bench);
  });

  /**
   * node-postgres' own pipeline mode (`pipeline: true` in the pool's options, pg ≥ 8.19): the
   * batch sends its statements as ordinary queries back to back on such a client, since a
   * submitted query of its own cannot share a pipelined connection.
   */
  describeIf(testPooler === null)("on a client in node-postgres' pipeline mode", () => {
    let bench: BatchBench;

    beforeAll(async () => {
      bench = await BatchBench.boot({}, { pipeline: true });
    });

    afterAll(() => bench?.close());

    it('(the premise: the pool hands out clients in pipeline mode)', async () => {
      const workflow = await bench.newWorkflow();
      const mark = bench.sent.mark();
      await bench.hotPath((uow) => bench.store.lockRows(uow, workflow.id, uuidv7()));
      expect(bench.sent.since(mark)[0].client?.pipeline).toBe(true);
    });

    it("lockRows returns what TypeORM's own reads return", async () => {
      const { workflow, execution, reference } = await stepInProgress(bench);
      const locked = await bench.hotPath((uow) =>
        bench.store.lockRows(uow, workflow.id, execution.id),
      );
      expect(locked.workflow).toStrictEqual(reference.workflow);
      expect(locked.execution).toStrictEqual(reference.execution);
    });

    itRunsTheHotPathTransactions(() => bench);

    it('leaves no prepared statement on the connection with default options', async () => {
      await finishStepAndScheduleNext(bench);
      expect(await bench.held()).toEqual([]);
    });
  });

  describeIf(testPooler === null)(
    "on a client in node-postgres' pipeline mode, with preparedStatements: true (ignored there)",
    () => {
      let bench: BatchBench;

      beforeAll(async () => {
        bench = await BatchBench.boot({ preparedStatements: true }, { pipeline: true });
      });

      afterAll(() => bench?.close());

      itRunsTheHotPathTransactions(() => bench);

      // node-postgres keeps its own list of the names it parsed in pipeline mode, which nothing
      // public clears after a DEALLOCATE: the library names nothing on such clients.
      it('sends unnamed statements only, so a DEALLOCATE ALL costs nothing', async () => {
        await finishStepAndScheduleNext(bench);
        expect(await bench.held()).toEqual([]);
        await bench.dataSource.query('DEALLOCATE ALL');
        await finishStepAndScheduleNext(bench);
        expect(await bench.held()).toEqual([]);
      });
    },
  );
});
