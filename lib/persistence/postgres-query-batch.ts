import {
  QueryFailedError,
  QueryResult,
  type DataSource,
  type EntityMetadata,
  type EntityTarget,
  type ObjectLiteral,
  type QueryRunner,
} from 'typeorm';
import { SignalEntity } from '../entities/signal.entity';
import { StepExecutionEntity } from '../entities/step-execution.entity';
import { WorkflowEntity } from '../entities/workflow.entity';
import { PostgresLiterals } from './postgres-literals';
import { PostgresPreparedStatements, type LiteralStatement } from './postgres-prepared-statements';
import { PostgresWriteStatements, type Criterion } from './postgres-write-statements';

/** One statement's result as node-postgres reports it. */
export interface PgResult {
  command: string;
  rowCount: number | null;
  rows: Array<Record<string, unknown>>;
}

/** The node-postgres client a PostgreSQL query runner holds. */
interface PgClient {
  query(sql: string): Promise<PgResult | PgResult[]>;
}

/** A write held back: an INSERT keeps its row, so later changes to that row can join it. */
type PendingWrite =
  | { kind: 'insert'; metadata: EntityMetadata; row: Record<string, unknown> }
  | {
      kind: 'update';
      metadata: EntityMetadata;
      criteria: Record<string, Criterion>;
      changes: Record<string, unknown>;
    };

/** What every batched transaction of a DataSource shares: names, templates, prepared statements. */
export interface PostgresBatchContext {
  dataSource: DataSource;
  /** The library's table names, as they appear in SQL text. */
  ownTables: readonly string[];
  literals: PostgresLiterals;
  writeStatements: PostgresWriteStatements;
  preparedStatements: PostgresPreparedStatements;
}

/** The shared context of a DataSource's batched transactions (`preparedStatements`: the option). */
export function createPostgresBatchContext(
  dataSource: DataSource,
  preparedStatements: boolean,
): PostgresBatchContext {
  const literals = new PostgresLiterals(dataSource);
  return {
    dataSource,
    ownTables: [WorkflowEntity, StepExecutionEntity, SignalEntity].map(
      (entity) => dataSource.getMetadata(entity).tableName,
    ),
    literals,
    writeStatements: new PostgresWriteStatements(literals),
    preparedStatements: new PostgresPreparedStatements(preparedStatements),
  };
}

type QueryFunction = (
  query: string,
  parameters?: unknown[],
  structured?: boolean,
) => Promise<unknown>;

/**
 * PostgreSQL round-trip saver for the runner's transactions, where every round trip costs far more
 * than the statement itself. It takes over the transaction's query runner and:
 * - holds back START TRANSACTION (and SET TRANSACTION) until the first statement that needs the
 *   database, and sends them with it; a transaction that never needed the database sends nothing;
 * - holds back the store's writes (`update`, `insert`) and sends them together, just before the
 *   next read on the connection (reads always see the transaction's own writes) or with the
 *   COMMIT; a change to a row inserted earlier in the batch joins its INSERT;
 * - sends several reads in one message (`readTogether`).
 * Statements travel in one simple-query message, values as escaped literals (PostgresLiterals),
 * as prepared statements where enabled (PostgresPreparedStatements). A failed message fails the
 * transaction, which rolls back as usual; a rollback drops what is still pending. The messages
 * are logged through the DataSource's logger like any query, but are not broadcast to
 * subscribers' `beforeQuery`/`afterQuery`.
 */
export class PostgresQueryBatch {
  /** Transaction control held back until the first statement. */
  private readonly opening: string[] = [];
  private readonly writes: PendingWrite[] = [];
  private queryRunner: QueryRunner | null = null;
  private send: QueryFunction | null = null;

  constructor(private readonly shared: PostgresBatchContext) {}

  /** Routes every query of `queryRunner` through the batch; call before its transaction starts. */
  attach(queryRunner: QueryRunner): void {
    const original = queryRunner.query.bind(queryRunner) as QueryFunction;
    this.queryRunner = queryRunner;
    this.send = (query, parameters, structured) =>
      structured ? original(query, parameters, true) : original(query, parameters);
    queryRunner.query = this.intercept.bind(this) as QueryRunner['query'];
  }

  get sqlLiterals(): PostgresLiterals {
    return this.shared.literals;
  }

  /** Sends what is pending and `reads` in one message; resolves the results of `reads`. */
  readTogether(reads: readonly LiteralStatement[]): Promise<PgResult[]> {
    return this.flush(reads);
  }

  /** `UPDATE … SET changes WHERE criteria` (changes and criteria by property name). */
  update<E extends ObjectLiteral>(
    target: EntityTarget<E>,
    criteria: Record<string, Criterion>,
    changes: Partial<E>,
  ): void {
    const metadata = this.shared.dataSource.getMetadata(target);
    const written = Object.fromEntries(
      Object.entries(changes).filter(
        ([property, value]) =>
          value !== undefined && this.shared.literals.column(metadata, property).isUpdate,
      ),
    );
    if (Object.keys(written).length === 0) return;
    const inserted = this.pendingInsertOf(metadata, criteria);
    if (inserted) Object.assign(inserted.row, written);
    else this.writes.push({ kind: 'update', metadata, criteria, changes: written });
  }

  /** `INSERT` of one row, with the columns TypeORM would insert. */
  insert<E extends ObjectLiteral>(target: EntityTarget<E>, row: E): void {
    this.writes.push({
      kind: 'insert',
      metadata: this.shared.dataSource.getMetadata(target),
      row: { ...row },
    });
  }

  /**
   * The pending INSERT an update by primary key can join: only when that INSERT is still the
   * last pending write to its table, so no statement between them can depend on the row's
   * earlier values (a unique index spanning rows, a criterion matching it).
   */
  private pendingInsertOf(
    metadata: EntityMetadata,
    criteria: Record<string, Criterion>,
  ): Extract<PendingWrite, { kind: 'insert' }> | null {
    const primary = metadata.primaryColumns[0].propertyName;
    const keys = Object.keys(criteria);
    const id = criteria[primary];
    if (keys.length !== 1 || keys[0] !== primary || typeof id !== 'string') return null;
    for (let index = this.writes.length - 1; index >= 0; index--) {
      const write = this.writes[index];
      if (write.metadata !== metadata) continue;
      return write.kind === 'insert' && write.row[primary] === id ? write : null;
    }
    return null;
  }

  private async intercept(
    query: string,
    parameters?: unknown[],
    structured?: boolean,
  ): Promise<unknown> {
    if (
      query.startsWith('START TRANSACTION') ||
      (this.opening.length > 0 && query.startsWith('SET TRANSACTION'))
    ) {
      this.opening.push(query);
      return structured ? new QueryResult() : undefined;
    }
    if (query === 'COMMIT') {
      // Nothing was sent yet: there is no transaction on the server, nothing to commit.
      if (this.opening.length > 0 && this.writes.length === 0)
        return this.forgetOpening(structured);
      if (this.writes.length > 0) {
        await this.flush([], 'COMMIT');
        return structured ? new QueryResult() : undefined;
      }
    } else if (query.startsWith('ROLLBACK')) {
      this.writes.length = 0;
      if (this.opening.length > 0) return this.forgetOpening(structured);
    } else if (
      this.opening.length > 0 ||
      (this.writes.length > 0 && !this.cannotSeePending(query))
    ) {
      await this.flush([]);
    }
    return this.send!(query, parameters, structured);
  }

  private forgetOpening(structured: boolean | undefined): unknown {
    this.opening.length = 0;
    return structured ? new QueryResult() : undefined;
  }

  /**
   * A plain SELECT naming none of the library's tables (a hero load) cannot observe the pending
   * writes, so it need not wait for them.
   */
  private cannotSeePending(query: string): boolean {
    return (
      /^\s*SELECT\b/i.test(query) && !this.shared.ownTables.some((table) => query.includes(table))
    );
  }

  /**
   * One simple-query message: the held-back opening and writes, then `statements`, then
   * `closing`. Resolves the results of `statements`.
   */
  private async flush(
    statements: readonly LiteralStatement[],
    closing?: 'COMMIT',
  ): Promise<PgResult[]> {
    const runner = this.queryRunner!;
    const client = (await runner.connect()) as PgClient;
    const writes = this.writes.splice(0).map((write) => this.statementOf(write));
    const rendered = this.shared.preparedStatements.render(client, [...writes, ...statements]);
    const opening = this.opening.splice(0);
    const sql = [...opening, ...rendered.sql, ...(closing ? [closing] : [])].join(';\n');
    this.shared.dataSource.logger.logQuery(sql, [], runner);
    try {
      const sent = await client.query(sql);
      rendered.succeeded();
      const results = Array.isArray(sent) ? sent : [sent];
      return rendered.positions
        .slice(writes.length)
        .map((position) => results[opening.length + position]);
    } catch (error) {
      rendered.failed();
      this.shared.dataSource.logger.logQueryError(error as Error, sql, [], runner);
      throw new QueryFailedError(sql, [], error as Error);
    }
  }

  private statementOf(write: PendingWrite): LiteralStatement {
    return write.kind === 'insert'
      ? this.shared.writeStatements.insert(write.metadata, write.row)
      : this.shared.writeStatements.update(write.metadata, write.criteria, write.changes);
  }
}
