import type { DataSource } from 'typeorm';

/** A named statement a PostgreSQL connection holds (a row of `pg_prepared_statements`). */
export interface HeldStatement {
  name: string;
  statement: string;
  /** When it was parsed: unchanged while the connection reuses it. */
  prepareTime: Date;
  /** Times it ran (generic plus custom plans). */
  executions: number;
  /** Prepared by SQL-level `PREPARE` rather than a protocol-level Parse. */
  fromSql: boolean;
}

/** The library's statement names: `gd_<instance>_<n>` (PostgresStatementNames). */
export const STATEMENT_NAME = /^gd_[0-9a-f]{8}_\d+$/;

/** `gd_<instance>` of a statement name: the library instance that named it. */
export function namePrefixOf(name: string): string {
  return name.replace(/_\d+$/, '');
}

/**
 * The named statements of the connection `dataSource.query` runs on, by name. Meaningful on a
 * pool of one connection (`extra: { max: 1 }`), where that is the connection every transaction
 * used, and never through a transaction pooler, which hands each query its own server connection.
 */
export async function heldStatements(dataSource: DataSource): Promise<HeldStatement[]> {
  const rows = await dataSource.query<
    Array<{
      name: string;
      statement: string;
      prepare_time: Date;
      executions: string;
      from_sql: boolean;
    }>
  >(
    'SELECT name, statement, prepare_time, generic_plans + custom_plans AS executions, from_sql ' +
      'FROM pg_prepared_statements ORDER BY name',
  );
  return rows.map((row) => ({
    name: row.name,
    statement: row.statement,
    prepareTime: row.prepare_time,
    executions: Number(row.executions),
    fromSql: row.from_sql,
  }));
}
