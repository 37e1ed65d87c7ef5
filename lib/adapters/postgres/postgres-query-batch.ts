import { QueryFailedError, type DataSource, type QueryRunner } from 'typeorm';
import { SignalEntity } from '../../entities/signal.entity';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import { WorkflowEntity } from '../../entities/workflow.entity';
import type { SchemaFeatures } from '../../ports/workflow.repository';
import type { BoundStatement, StatementResult } from './bound-statement.interface';
import { LibraryTable, STEP_FENCE_SETTING, type Criterion } from './library-table';
import { runPipelined, type PgClient } from './postgres-pipeline';
import { PostgresStatementNames } from './postgres-statement-names';

/** The library's tables on the hot path. */
export interface LibraryTables {
  workflows: LibraryTable<WorkflowEntity>;
  executions: LibraryTable<StepExecutionEntity>;
  signals: LibraryTable<SignalEntity>;
}

/** What every batched transaction of a DataSource shares: tables, statement names, the logger. */
export interface PostgresBatchContext {
  dataSource: DataSource;
  tables: LibraryTables;
  names: PostgresStatementNames;
}

/** The shared context of a DataSource's batched transactions (`preparedStatements`: the option). */
export function createPostgresBatchContext(
  dataSource: DataSource,
  preparedStatements: boolean,
  features: () => SchemaFeatures,
): PostgresBatchContext {
  return {
    dataSource,
    tables: {
      workflows: new LibraryTable(dataSource.getMetadata(WorkflowEntity), WorkflowEntity, features),
      executions: new LibraryTable(
        dataSource.getMetadata(StepExecutionEntity),
        StepExecutionEntity,
        features,
      ),
      signals: new LibraryTable(dataSource.getMetadata(SignalEntity), SignalEntity, features),
    },
    names: new PostgresStatementNames(preparedStatements),
  };
}

/** A write held back: an INSERT keeps its row, so later changes to that row can join it. */
type PendingWrite =
  | { kind: 'insert'; table: LibraryTable<object>; row: Record<string, unknown> }
  | {
      kind: 'update';
      table: LibraryTable<object>;
      criteria: Record<string, Criterion>;
      changes: Record<string, unknown>;
    };

/** Conditions of a fence: SQL over placeholders from `$1`, and their values in order. */
export interface FenceConditions {
  sql: string;
  values: ReadonlyArray<string | null>;
}

/** What a guessing transaction checks once its locks are held (see `PostgresQueryBatch.guess`). */
export interface AfterLocks {
  /** A read whose rows the caller keeps; the fence holds only if it finds a row. */
  read: BoundStatement | null;
  /** Conditions over placeholders numbered after the read's. */
  conditions: FenceConditions | null;
}

/** The fence statements of a transaction that guessed its rows (see `PostgresQueryBatch.guess`). */
interface Guess {
  statements: readonly BoundStatement[];
  /** Whether the last statement carries the `AfterLocks` read. */
  withRead: boolean;
  token: string;
  /** The fence statements' results, once their message ran. */
  results: StatementResult[] | null;
  /** Whether the fence held, once its message ran. */
  held: boolean | null;
}

/**
 * One of the runner's transactions on PostgreSQL, where every round trip costs far more than the
 * statement itself. It owns the transaction on a connection of the DataSource's pool:
 * - the opening (`BEGIN`) waits for the first statement and travels with it; a transaction that
 *   never needed the database sends nothing;
 * - the store's writes are held back and sent together before the next read of the library's
 *   tables (reads always see the transaction's own writes) or with the COMMIT; a change to a row
 *   inserted earlier in the batch joins its INSERT;
 * - several reads go in one message (`readTogether`).
 * A message is one round trip of bound statements (`runPipelined`): no value is ever part of the
 * SQL text. A failed message fails the transaction, which the caller rolls back; a rollback drops
 * what is still pending. Messages are logged through the DataSource's logger like any query.
 */
export class PostgresQueryBatch {
  private opening: BoundStatement | null;
  private readonly writes: PendingWrite[] = [];
  /** The COMMIT went through: nothing is left to roll back. */
  private committed = false;
  private pendingGuess: Guess | null = null;

  constructor(
    private readonly shared: PostgresBatchContext,
    private readonly client: PgClient,
    private readonly queryRunner: QueryRunner,
    opening: string,
    /** False on the run after a broken fence: that one reads before it writes. */
    private readonly mayGuess = true,
  ) {
    this.opening = { text: opening, values: [] };
  }

  /**
   * Saves the round trip of a transaction that locks rows only to confirm what its caller already
   * knows (a step chain finalizing the step it just started). Its first message carries a fence:
   * a statement that locks the rows and checks them (`locking`: `EXISTS (… FOR UPDATE)`
   * conditions, placeholders from `$1`) and sets the transaction-local
   * `geneva_drive.step_fence` to `token` only where they hold; with `afterLocks`, a second
   * statement, run once the locks are held, that moves the setting on to `token` only where its
   * read finds a row and its conditions hold too. Every write of this transaction is fenced by it
   * (`LibraryTable`: `… AND current_setting(…) = token`). Held, the writes are exactly those of a
   * transaction that read first; broken, none lands and the commit commits nothing (`fenceHeld`
   * is then false: the caller runs the work again, reading first). False when this transaction
   * cannot guess: it sent something already, holds writes, or is the run after a broken fence.
   */
  guess(locking: FenceConditions, afterLocks: AfterLocks | null, token: string): boolean {
    if (!this.mayGuess || !this.opening || this.writes.length > 0 || this.pendingGuess)
      return false;
    // The setting's name, the tokens and the empty string are bound too: no quote in the text.
    const lockedToken = afterLocks ? `${token} locked` : token;
    const slot = locking.values.length;
    const statements: BoundStatement[] = [
      {
        text:
          `SELECT set_config($${slot + 1}, CASE WHEN ${locking.sql} ` +
          `THEN $${slot + 2} ELSE $${slot + 3} END, true) AS "fence"`,
        values: [...locking.values, STEP_FENCE_SETTING, lockedToken, ''],
      },
    ];
    if (afterLocks) statements.push(confirmationOf(afterLocks, lockedToken, token));
    this.pendingGuess = {
      statements,
      withRead: afterLocks?.read != null,
      token,
      results: null,
      held: null,
    };
    return true;
  }

  /** Whether this transaction guessed its rows (`guess`): its writes must all be fenced. */
  get guessed(): boolean {
    return this.pendingGuess !== null;
  }

  /** The result of the guess's `AfterLocks` read, once its message ran (else null). */
  get guessRead(): StatementResult | null {
    const guess = this.pendingGuess;
    return guess?.withRead ? (guess.results?.at(-1) ?? null) : null;
  }

  /** Null without a guess or before its message; else whether its fence held. */
  get fenceHeld(): boolean | null {
    return this.pendingGuess?.held ?? null;
  }

  get tables(): LibraryTables {
    return this.shared.tables;
  }

  /** Whether the transaction is open on the server (its opening was sent). */
  get opened(): boolean {
    return this.opening === null;
  }

  /** Sends what is pending and `reads` in one message; resolves the results of `reads`. */
  async readTogether(reads: readonly BoundStatement[]): Promise<StatementResult[]> {
    const results = await this.send(reads, null);
    return results.slice(results.length - reads.length);
  }

  /** Sends everything held back, so a query issued next sees this transaction's writes. */
  async flush(): Promise<void> {
    if (this.opening || this.writes.length > 0) await this.send([], null);
  }

  /** Opens the transaction on the server if it is not yet; held-back writes may stay pending. */
  async open(): Promise<void> {
    if (this.opening) await this.send([], null, false);
  }

  /** `UPDATE … SET changes WHERE criteria` (changes and criteria by property name). */
  update<E extends object>(
    table: LibraryTable<E>,
    criteria: Record<string, Criterion>,
    changes: Partial<E>,
  ): void {
    this.requireOpen();
    const written = Object.fromEntries(
      Object.entries(changes).filter(
        ([property, value]) => value !== undefined && table.writes(property),
      ),
    );
    if (Object.keys(written).length === 0) return;
    const inserted = this.pendingInsertOf(table, criteria);
    if (inserted) Object.assign(inserted.row, written);
    else
      this.writes.push({
        kind: 'update',
        table: table,
        criteria,
        changes: written,
      });
  }

  /** `INSERT` of one row (the columns that exist and are set). */
  insert<E extends object>(table: LibraryTable<E>, row: E): void {
    this.requireOpen();
    const kept = Object.fromEntries(
      Object.entries(row).filter(([property]) => table.writes(property)),
    );
    this.writes.push({ kind: 'insert', table: table, row: kept });
  }

  /**
   * Sends what is pending, `statements` and the COMMIT in one message: a transaction whose
   * statements decide everything themselves. Resolves the results of `statements`; the batch
   * takes no statement after it.
   */
  async commitWith(statements: readonly BoundStatement[]): Promise<StatementResult[]> {
    const results = await this.send(statements, 'COMMIT');
    this.committed = true;
    return results.slice(results.length - statements.length - 1, results.length - 1);
  }

  /** Commits: the held-back writes travel with the COMMIT; nothing is sent if nothing was. */
  async commit(): Promise<void> {
    if (this.committed) return;
    if (this.opening && this.writes.length === 0 && !this.pendingGuess) this.opening = null;
    else await this.send([], 'COMMIT');
    this.committed = true;
  }

  /** Rolls back on the server if the transaction was opened there; drops pending writes. */
  async rollback(): Promise<void> {
    this.writes.length = 0;
    if (this.opening || this.committed) {
      this.opening = null;
      return;
    }
    await this.run([{ text: 'ROLLBACK', values: [] }]);
  }

  /** After `commitWith`, a write would land outside the transaction: refused, never dropped. */
  private requireOpen(): void {
    if (this.committed)
      throw new Error('PostgresQueryBatch: this transaction has committed; it takes no statement.');
  }

  /**
   * The pending INSERT an update by primary key can join: only when that INSERT is still the
   * last pending write to its table, so no statement between them can depend on the row's
   * earlier values (a unique index spanning rows, a criterion matching it).
   */
  private pendingInsertOf(
    table: LibraryTable<object>,
    criteria: Record<string, Criterion>,
  ): Extract<PendingWrite, { kind: 'insert' }> | null {
    const keys = Object.keys(criteria);
    const id = criteria.id;
    if (keys.length !== 1 || keys[0] !== 'id' || typeof id !== 'string') return null;
    for (let index = this.writes.length - 1; index >= 0; index--) {
      const write = this.writes[index];
      if (write.table !== table) continue;
      return write.kind === 'insert' && write.row.id === id ? write : null;
    }
    return null;
  }

  /**
   * One round trip: the held-back opening and (unless `withWrites` is false) writes, then
   * `statements`, then `closing`. Resolves every statement's result, in order.
   */
  private async send(
    statements: readonly BoundStatement[],
    closing: 'COMMIT' | null,
    withWrites = true,
  ): Promise<StatementResult[]> {
    this.requireOpen();
    const message: BoundStatement[] = [];
    const guess = this.opening ? this.pendingGuess : null;
    if (this.opening) message.push(this.opening);
    if (guess) message.push(...guess.statements);
    const fenceToken = this.pendingGuess?.token;
    if (withWrites)
      for (const write of this.writes.splice(0))
        message.push(
          write.kind === 'insert'
            ? write.table.insert(write.row, fenceToken)
            : write.table.update(write.criteria, write.changes, fenceToken),
        );
    message.push(...statements);
    if (closing) message.push({ text: closing, values: [] });
    this.opening = null;
    const results = await this.run(message);
    if (!guess) return results;
    const start = 1; // after the opening
    const end = start + guess.statements.length;
    guess.results = results.slice(start, end);
    guess.held = results[end - 1]?.rows[0]?.fence === guess.token;
    // The caller's own statements' results come last, as without a guess.
    return [results[0], ...results.slice(end)];
  }

  /**
   * One round trip, logged like any query. A database error comes back as TypeORM's
   * QueryFailedError, as from any other query of the app.
   */
  private async run(message: readonly BoundStatement[]): Promise<StatementResult[]> {
    const { logger } = this.shared.dataSource;
    const text = message.map((statement) => statement.text).join(';\n');
    const values = message.flatMap((statement) => statement.values);
    logger.logQuery(text, values, this.queryRunner);
    try {
      return await runPipelined(this.client, message, this.shared.names);
    } catch (error) {
      logger.logQueryError(error as Error, text, values, this.queryRunner);
      throw new QueryFailedError(text, values, error as Error);
    }
  }
}

/**
 * The fence's second statement: moves the setting from `lockedToken` to `token` where the read
 * finds a row (the set_config runs once per row it returns) and the conditions hold. It runs after
 * the locking statement, so it reads what committed before the locks were granted.
 */
function confirmationOf(
  { read, conditions }: AfterLocks,
  lockedToken: string,
  token: string,
): BoundStatement {
  const before = (read?.values.length ?? 0) + (conditions?.values.length ?? 0);
  const checkSql =
    `current_setting($${before + 1}, true) = $${before + 2}` +
    (conditions ? ` AND ${conditions.sql}` : '');
  const setFenceSql = `set_config($${before + 1}, CASE WHEN ${checkSql} THEN $${before + 3} ELSE $${before + 4} END, true) AS "fence"`;
  // The read's own statement (a query builder's, its values bound), as a derived table.
  const readSql = read?.text ?? null;
  return {
    text:
      readSql !== null
        ? `SELECT "read".*, ${setFenceSql} FROM (${readSql}) AS "read"`
        : `SELECT ${setFenceSql}`,
    values: [
      ...(read?.values ?? []),
      ...(conditions?.values ?? []),
      STEP_FENCE_SETTING,
      lockedToken,
      token,
      '',
    ],
  };
}
