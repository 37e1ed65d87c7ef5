import type { DataSource } from 'typeorm';
import { splitStatements } from '../../test/e2e/support/sql-text';
import { tapQueryLog } from './query-log-tap';

/** What the database was sent while a counter was counting. */
export interface SqlCount {
  /** Queries sent, transaction control included (several `;`-separated statements are one). */
  roundTrips: number;
  /** Statements that read or write data (all but transaction control), each one counted. */
  statements: number;
  /** START TRANSACTION / BEGIN (transaction control is counted inside multi-statement queries too). */
  begins: number;
  commits: number;
  /** Whole-transaction rollbacks (not ROLLBACK TO SAVEPOINT). */
  rollbacks: number;
  /** SAVEPOINT, RELEASE SAVEPOINT, ROLLBACK TO SAVEPOINT. */
  savepoints: number;
  /** Every query in order, compacted (see `compact`). */
  log: string[];
}

type ControlCounter = 'begins' | 'commits' | 'rollbacks' | 'savepoints';

const TRANSACTION_CONTROL: Array<[RegExp, ControlCounter | null]> = [
  [/^(START TRANSACTION|BEGIN)\b/i, 'begins'],
  [/^COMMIT\b/i, 'commits'],
  [/^(SAVEPOINT|RELEASE SAVEPOINT|ROLLBACK TO SAVEPOINT)\b/i, 'savepoints'],
  [/^ROLLBACK\b/i, 'rollbacks'],
  // The isolation level of a transaction being opened: a round trip of its own.
  [/^SET TRANSACTION\b/i, null],
];

/**
 * Counts the SQL a DataSource sends (every statement, transaction control included, through
 * `tapQueryLog`).
 */
export class SqlCounter {
  private log: string[] = [];
  private counting = false;

  private constructor() {}

  static install(dataSource: DataSource): SqlCounter {
    const counter = new SqlCounter();
    tapQueryLog(dataSource, (sql) => {
      if (counter.counting)
        counter.log.push(compact(splitStatements(sql).join('; '), dataSource.driver.options));
    });
    return counter;
  }

  start(): void {
    this.log = [];
    this.counting = true;
  }

  /** Stops counting and resolves what was sent since `start()`. */
  stop(): SqlCount {
    this.counting = false;
    return classify(this.log);
  }
}

/**
 * One line per query, readable in a summary: whitespace collapsed, the select list elided (the
 * engine selects whole rows) and the schema qualifier dropped.
 */
function compact(sql: string, options: DataSource['driver']['options']): string {
  const schema =
    'schema' in options && typeof options.schema === 'string' ? `"${options.schema}".` : null;
  const oneLine = sql
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^SELECT .+? FROM /, 'SELECT … FROM ');
  return schema ? oneLine.split(schema).join('') : oneLine;
}

function classify(log: string[]): SqlCount {
  const count: SqlCount = {
    roundTrips: log.length,
    statements: 0,
    begins: 0,
    commits: 0,
    rollbacks: 0,
    savepoints: 0,
    log,
  };
  for (const statement of log.flatMap(splitStatements)) {
    const control = TRANSACTION_CONTROL.find(([pattern]) => pattern.test(statement));
    if (!control) count.statements += 1;
    else if (control[1]) count[control[1]] += 1;
  }
  return count;
}
