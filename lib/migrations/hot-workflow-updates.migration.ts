import type { MigrationInterface, QueryRunner } from 'typeorm';
import { quoteIdentifier, quoteTable } from '../adapters/sql-identifiers';
import { migrationDialectOf } from './column-types';
import { INDEX_NAMES, WORKFLOWS_TABLE } from './migration.constants';

/** Free space left in each new page of the workflows table, in percent. */
export const WORKFLOWS_FILLFACTOR = 85;

/**
 * PostgreSQL only: lets the step that follows another rewrite its workflow row in place (a "HOT"
 * update, which writes no index entry). PostgreSQL updates a row in place only when no indexed
 * column changes and the row's page has room:
 * - the dashboard's step-filter index `(COALESCE(current_step_name, next_step_name), created_at,
 *   id)` goes: the current step changes at every step, so with it every workflow UPDATE wrote an
 *   entry into each of the table's nine indexes (a quarter of PostgreSQL's CPU per step, measured
 *   with `perf`); the step filter now reads the newest-first list until its page is full, as on
 *   MariaDB, MySQL and SQLite (README "Dashboard" gives the index for those who want it back);
 * - new pages of the workflows table keep 15% free, room for the next version of their rows.
 * A no-op on MariaDB, MySQL and SQLite, which never had the index.
 */
export class GenevaDriveHotWorkflowUpdates1764400009000 implements MigrationInterface {
  name = 'GenevaDriveHotWorkflowUpdates1764400009000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const table = await postgresWorkflowsTable(queryRunner);
    if (!table) return;
    await queryRunner.query(
      `DROP INDEX IF EXISTS ${indexOf(table, INDEX_NAMES.workflowsStepCreated)}`,
    );
    await queryRunner.query(
      `ALTER TABLE ${quoteTable(table)} SET (fillfactor = ${WORKFLOWS_FILLFACTOR})`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const table = await postgresWorkflowsTable(queryRunner);
    if (!table) return;
    await queryRunner.query(`ALTER TABLE ${quoteTable(table)} RESET (fillfactor)`);
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(INDEX_NAMES.workflowsStepCreated)} ON ${quoteTable(table)} ` +
        `((COALESCE(${quoteIdentifier('current_step_name')}, ${quoteIdentifier('next_step_name')})), ` +
        `${quoteIdentifier('created_at')}, ${quoteIdentifier('id')})`,
    );
  }
}

/** The workflows table's schema (as TypeORM resolves it) and name, on PostgreSQL when it exists. */
async function postgresWorkflowsTable(
  queryRunner: QueryRunner,
): Promise<{ schema?: string; tableName: string } | null> {
  if (migrationDialectOf(queryRunner) !== 'postgres') return null;
  const table = await queryRunner.getTable(WORKFLOWS_TABLE);
  return table ? { schema: table.schema, tableName: WORKFLOWS_TABLE } : null;
}

/** An index of `table`, qualified by the table's schema (an index lives in its table's schema). */
function indexOf(table: { schema?: string }, name: string): string {
  return table.schema
    ? `${quoteIdentifier(table.schema)}.${quoteIdentifier(name)}`
    : quoteIdentifier(name);
}
