import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { SignalEntity } from '../../entities/signal.entity';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import { WorkflowEntity } from '../../entities/workflow.entity';
import { InvalidArgumentError } from '../../errors/invalid-argument.error';
import { MissingMigrationError } from '../../errors/missing-migration.error';
import { ModuleOptionsError } from '../../errors/module-options.error';
import { InjectResolvedOptions } from '../../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../../options/resolved-options.interface';
import { AfterCommitSubscriber } from './after-commit.subscriber';
import { JobDispatcher } from '../../queue/job-dispatcher';
import { AsyncMutex, sqliteMutexFor } from './async-mutex';
import { checkMariaDbJsonColumns } from './mariadb-json-columns.check';
import { checkMysqlSqlMode } from './mysql-sql-mode.check';
import type { PgClient } from '../postgres/postgres-pipeline';
import {
  createPostgresBatchContext,
  PostgresQueryBatch,
  type LibraryTables,
  type PostgresBatchContext,
} from '../postgres/postgres-query-batch';
import type { SchemaFeatures } from '../../ports/workflow.repository';
import { detectSchemaFeatures, missingBaseTables } from './schema-features';
import { databaseFamily, hasUtcTimezone, type DatabaseFamily } from './sql-dialect';
import { UnitOfWork } from './unit-of-work';

/** How a library transaction runs. */
export interface TransactionOptions {
  /**
   * The runner's transactions: merge the changes to workflow rows and write each once before the
   * commit; on PostgreSQL also save round trips with a PostgresQueryBatch (the opening, the store's
   * writes and its locking reads travel together).
   */
  hotPath?: boolean;
  /** Resolve at the commit; enqueue the jobs after it without waiting (JobDispatcher.handOver). */
  enqueueInBackground?: boolean;
}

/**
 * The library's handle on the app's TypeORM DataSource: resolves it at `onModuleInit`, and runs
 * every library transaction (READ COMMITTED, after-commit enqueue, savepoints inside a caller's
 * transaction, an in-process mutex on SQLite). Per-database differences live here and in
 * `sql-dialect.ts`: the family, row locks and locking reads, the SQLite mutex, the MariaDB/MySQL
 * boot checks (sql_mode, JSON column storage, time zone).
 */
@Injectable()
export class GenevaDriveDataSource implements OnModuleInit {
  private source: DataSource | null = null;
  private familyName: DatabaseFamily = 'postgres';
  private sqliteMutex = new AsyncMutex();
  private schemaFeatures: SchemaFeatures = {
    resumable: true,
    signals: true,
    waitTimeouts: true,
    workflowContext: true,
  };
  private readCommittedByDefault = false;
  /** PostgreSQL: what the runner's batched transactions share (see PostgresQueryBatch). */
  private batching: PostgresBatchContext | null = null;

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly dispatcher: JobDispatcher,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  async onModuleInit(): Promise<void> {
    const token = getDataSourceToken(this.options.dataSource);
    let dataSource: DataSource;
    try {
      dataSource = this.moduleRef.get<DataSource>(token, { strict: false });
    } catch {
      throw new ModuleOptionsError(
        `GenevaDriveModule found no TypeORM data source${this.options.dataSource ? ` named '${this.options.dataSource}'` : ''}. ` +
          'Import TypeOrmModule.forRoot() (with GENEVA_DRIVE_ENTITIES) or set the dataSource option to its name.',
      );
    }
    for (const entity of [WorkflowEntity, StepExecutionEntity, SignalEntity]) {
      if (!dataSource.hasMetadata(entity)) {
        throw new ModuleOptionsError(
          `The TypeORM data source does not register ${entity.name}. Add GENEVA_DRIVE_ENTITIES to its entities (and GENEVA_DRIVE_MIGRATIONS to its migrations).`,
        );
      }
    }
    this.familyName = databaseFamily(dataSource);
    if (this.familyName === 'mysql') await checkMysqlSqlMode(dataSource);
    if (this.familyName === 'sqlite') this.sqliteMutex = sqliteMutexFor(dataSource);
    if (this.familyName === 'mysql' && !hasUtcTimezone(dataSource)) {
      (this.options.logger ?? new Logger('GenevaDrive')).warn(
        "The MariaDB/MySQL data source does not set timezone: 'Z'. mysql2 then reads and writes DATETIME " +
          "values in this process's local time zone, so step timestamps and schedules shift between hosts " +
          "in different zones. Add timezone: 'Z' to the TypeORM options.",
      );
    }
    dataSource.subscribers.push(new AfterCommitSubscriber(this.dispatcher));
    this.source = dataSource;
    if (this.familyName === 'postgres')
      this.batching = createPostgresBatchContext(
        dataSource,
        this.options.preparedStatements,
        () => this.schemaFeatures,
      );
    this.readCommittedByDefault = await this.detectReadCommittedDefault(dataSource);
    // The first start() would fail with the driver's "relation does not exist" otherwise.
    const missing = await missingBaseTables(dataSource);
    if (missing.length > 0) {
      throw new MissingMigrationError(
        `The library's tables ${missing.join(', ')} do not exist in this database: its migrations have not run. ` +
          "Add GENEVA_DRIVE_MIGRATIONS to the TypeORM data source's migrations and run them before the app starts " +
          '(migrationsRun: true, or `typeorm migration:run` at deploy time).',
      );
    }
    if (this.familyName === 'mysql') await checkMariaDbJsonColumns(dataSource);
    await this.refreshSchemaFeatures();
  }

  /** Which optional migrations have run, as last checked. */
  get features(): SchemaFeatures {
    return this.schemaFeatures;
  }

  /**
   * Checks the optional columns again (a migration may have run since boot); the library's reads
   * and writes of executions name only the columns that exist (ExecutionColumns, LibraryTable).
   */
  async refreshSchemaFeatures(): Promise<SchemaFeatures> {
    this.schemaFeatures = await detectSchemaFeatures(this.dataSource);
    return this.schemaFeatures;
  }

  get dataSource(): DataSource {
    if (!this.source) throw new Error('GenevaDriveDataSource used before onModuleInit.');
    return this.source;
  }

  /** PostgreSQL: the library's tables as the hot path writes them (null on other databases). */
  get libraryTables(): LibraryTables | null {
    return this.batching?.tables ?? null;
  }

  get family(): DatabaseFamily {
    return this.familyName;
  }

  get manager(): EntityManager {
    return this.dataSource.manager;
  }

  /**
   * Runs `work` in one transaction. With a caller's `manager` inside an active transaction it runs
   * in a savepoint of it, and its jobs wait for the caller's outermost commit.
   */
  async transaction<T>(
    work: (uow: UnitOfWork) => Promise<T>,
    callerManager?: EntityManager,
    options: TransactionOptions = {},
  ): Promise<T> {
    const callerRunner = callerManager?.queryRunner;
    if (callerManager && callerManager.connection !== this.dataSource) {
      throw new InvalidArgumentError(
        'The manager option belongs to another DataSource than the one GenevaDriveModule uses; pass a manager of that data source.',
      );
    }
    if (callerManager && callerRunner?.isTransactionActive) {
      let uow!: UnitOfWork;
      const result = await callerManager.transaction(async (manager) => {
        uow = this.newUnitOfWork(manager, options);
        return this.runWork(uow, work);
      });
      this.dispatcher.deferToCaller(callerRunner, uow.deferredJobs, uow.afterCommitWork);
      return result;
    }
    if (options.hotPath && this.batching) return this.batchedTransaction(work, options);
    let uow!: UnitOfWork;
    const body = (manager: EntityManager) =>
      this.runWork((uow = this.newUnitOfWork(manager, options)), work);
    const result =
      this.familyName === 'sqlite'
        ? // One connection: library transactions take turns (the enqueue below needs no turn).
          await this.sqliteMutex.runExclusive(() => this.dataSource.transaction(body))
        : this.readCommittedByDefault
          ? // Saves a SET TRANSACTION statement per transaction.
            await this.dataSource.transaction(body)
          : await this.dataSource.transaction('READ COMMITTED', body);
    await this.committed(uow, options);
    return result;
  }

  /**
   * A hot-path transaction on PostgreSQL, owned by a PostgresQueryBatch on a connection of the
   * DataSource's pool: its opening travels with the first statement, its writes with the COMMIT.
   * The query runner only lends the connection (and its manager, for heroes); TypeORM does not
   * see the transaction.
   */
  private async batchedTransaction<T>(
    work: (uow: UnitOfWork) => Promise<T>,
    options: TransactionOptions,
  ): Promise<T> {
    const guessed = await this.batchedAttempt(work, options, true);
    // A broken fence (see PostgresQueryBatch.guess) committed nothing: its jobs and
    // after-commit work are dropped, and the work runs again, reading before it writes.
    const { uow, result } =
      guessed.fenceHeld === false ? await this.batchedAttempt(work, options, false) : guessed;
    await this.committed(uow, options);
    return result;
  }

  private async batchedAttempt<T>(
    work: (uow: UnitOfWork) => Promise<T>,
    options: TransactionOptions,
    mayGuess: boolean,
  ): Promise<{ uow: UnitOfWork; result: T; fenceHeld: boolean | null }> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const client = (await runner.connect()) as PgClient;
      const batch = new PostgresQueryBatch(
        this.batching!,
        client,
        runner,
        this.readCommittedByDefault ? 'BEGIN' : 'BEGIN ISOLATION LEVEL READ COMMITTED',
        mayGuess,
      );
      const uow = this.newUnitOfWork(runner.manager, options, batch);
      try {
        const result = await this.runWork(uow, work);
        await batch.commit();
        return { uow, result, fenceHeld: batch.fenceHeld };
      } catch (error) {
        try {
          await batch.rollback();
        } catch {
          // The transaction's own error is the one worth reporting; a lost connection rolls back anyway.
        }
        throw error;
      }
    } finally {
      await runner.release();
    }
  }

  /** The transaction committed: its after-commit work, then its jobs (awaited unless told not to). */
  private async committed(uow: UnitOfWork, options: TransactionOptions): Promise<void> {
    if (options.enqueueInBackground)
      this.dispatcher.handOver(uow.deferredJobs, uow.afterCommitWork);
    else await this.dispatcher.committed(uow.deferredJobs, uow.afterCommitWork);
  }

  private async runWork<T>(uow: UnitOfWork, work: (uow: UnitOfWork) => Promise<T>): Promise<T> {
    const result = await work(uow);
    await uow.runBeforeCommit();
    return result;
  }

  /**
   * Runs a single write outside any transaction (a resumable step's cursor checkpoint). On SQLite
   * it waits for the mutex: better-sqlite3 has one connection, so a statement issued while a
   * library transaction is open would run inside that transaction and share its fate.
   */
  write<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    if (this.familyName !== 'sqlite') return work(this.manager);
    return this.sqliteMutex.runExclusive(() => work(this.manager));
  }

  private newUnitOfWork(
    manager: EntityManager,
    options: TransactionOptions,
    batch: PostgresQueryBatch | null = null,
  ): UnitOfWork {
    return new UnitOfWork(
      manager,
      this.familyName !== 'sqlite',
      this.dispatcher.immediateEnqueuer(),
      this.familyName === 'mysql',
      options.hotPath ?? false,
      batch,
    );
  }

  /**
   * PostgreSQL's `default_transaction_isolation` is READ COMMITTED unless the server or the
   * connection role changed it; only then does every transaction need its own SET TRANSACTION.
   */
  private async detectReadCommittedDefault(dataSource: DataSource): Promise<boolean> {
    if (this.familyName !== 'postgres') return false;
    // TypeORM 1.x applies a DataSource-level `isolationLevel` to transactions opened without one.
    const configured = (dataSource.options as { isolationLevel?: unknown }).isolationLevel;
    if (configured !== undefined && configured !== 'READ COMMITTED') return false;
    const rows = await dataSource.query<Array<Record<string, string>>>(
      'SHOW default_transaction_isolation',
    );
    return rows[0]?.default_transaction_isolation === 'read committed';
  }
}
