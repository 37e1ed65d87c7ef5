import type { QueryRunner } from 'typeorm';
import { quoteIdentifier, quoteTable } from '../adapters/sql-identifiers';
import { migrationDialectOf } from './column-types';

/** A library table as its PostgreSQL statements name it: the schema TypeORM resolves, and its name. */
export interface PostgresTable {
  schema?: string;
  tableName: string;
}

/** A library table's schema and name, on PostgreSQL when the table exists (else null). */
export async function postgresTable(
  queryRunner: QueryRunner,
  tableName: string,
): Promise<PostgresTable | null> {
  if (migrationDialectOf(queryRunner) !== 'postgres') return null;
  const table = await queryRunner.getTable(tableName);
  return table ? { schema: table.schema, tableName } : null;
}

/**
 * `CREATE INDEX name ON table (columns)`, with `IF NOT EXISTS` and a predicate (`whereSql`, the
 * library's own constant text) when given.
 */
export function createIndexSql(
  table: PostgresTable,
  name: string,
  columns: readonly string[],
  options: { ifNotExists?: boolean; whereSql?: string } = {},
): string {
  const list = columns.map((column) => quoteIdentifier(column)).join(', ');
  const guard = options.ifNotExists ? 'IF NOT EXISTS ' : '';
  const predicateSql = options.whereSql ? ` WHERE ${options.whereSql}` : '';
  return `CREATE INDEX ${guard}${quoteIdentifier(name)} ON ${quoteTable(table)} (${list})${predicateSql}`;
}

/** `DROP INDEX IF EXISTS` of an index of `table` (an index lives in its table's schema). */
export function dropIndexSql(table: PostgresTable, name: string): string {
  const qualified = table.schema
    ? `${quoteIdentifier(table.schema)}.${quoteIdentifier(name)}`
    : quoteIdentifier(name);
  return `DROP INDEX IF EXISTS ${qualified}`;
}
