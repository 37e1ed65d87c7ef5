import type { MigrationInterface, QueryRunner } from 'typeorm';
import { quoteIdentifier, quoteTable } from '../adapters/sql-identifiers';
import { migrationDialectOf } from './column-types';
import { INDEX_NAMES, STEP_EXECUTIONS_TABLE, WORKFLOWS_TABLE } from './migration.constants';

/** Free space left in each new page of the workflows table, in percent. */
export const WORKFLOWS_FILLFACTOR = 85;

/** Step-execution columns null on all but a few rows, each with its index (same name before and after). */
const SPARSE_EXECUTION_COLUMNS = [
  { column: 'continues_from_id', index: INDEX_NAMES.stepExecutionsContinuesFrom },
  { column: 'signal_id', index: INDEX_NAMES.stepExecutionsSignal },
] as const;

/**
 * PostgreSQL only: fewer index entries written per step. Every step updates its workflow row and
 * one step execution row and inserts the next execution; an UPDATE that changes an indexed column
 * writes an entry into every index of its table, and an INSERT into every index whose predicate
 * the row meets.
 * - The workflow row is updated in place ("HOT": no index entry at all) when no indexed column
 *   changes and its page has room. The dashboard's step-filter index `(COALESCE(current_step_name,
 *   next_step_name), created_at, id)` changed at every step, so it goes (the step filter reads the
 *   newest-first list until its page is full, as on MariaDB, MySQL and SQLite; README "The step
 *   filter and PostgreSQL's in-place updates"), and new pages of the table keep 15% free.
 * - The indexes on `continues_from_id` and `signal_id` become partial (`IS NOT NULL`): the columns
 *   are null on every execution but a resumable step's continuation and a signal's wake, and every
 *   lookup by them is an equality, which PostgreSQL serves from the partial index.
 * The index rebuilds read the step executions table once each under a write lock: on a large table
 * run it at a quiet moment. A no-op on MariaDB, MySQL and SQLite.
 */
export class GenevaDriveLeanStepWrites1764400009000 implements MigrationInterface {
  name = 'GenevaDriveLeanStepWrites1764400009000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const workflows = await postgresTable(queryRunner, WORKFLOWS_TABLE);
    const executions = await postgresTable(queryRunner, STEP_EXECUTIONS_TABLE);
    if (!workflows || !executions) return;
    await queryRunner.query(
      `DROP INDEX IF EXISTS ${indexOf(workflows, INDEX_NAMES.workflowsStepCreated)}`,
    );
    await queryRunner.query(
      `ALTER TABLE ${quoteTable(workflows)} SET (fillfactor = ${WORKFLOWS_FILLFACTOR})`,
    );
    for (const { column, index } of SPARSE_EXECUTION_COLUMNS) {
      await queryRunner.query(`DROP INDEX IF EXISTS ${indexOf(executions, index)}`);
      await queryRunner.query(
        `CREATE INDEX ${quoteIdentifier(index)} ON ${quoteTable(executions)} (${quoteIdentifier(column)}) ` +
          `WHERE ${quoteIdentifier(column)} IS NOT NULL`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const workflows = await postgresTable(queryRunner, WORKFLOWS_TABLE);
    const executions = await postgresTable(queryRunner, STEP_EXECUTIONS_TABLE);
    if (!workflows || !executions) return;
    for (const { column, index } of SPARSE_EXECUTION_COLUMNS) {
      await queryRunner.query(`DROP INDEX IF EXISTS ${indexOf(executions, index)}`);
      await queryRunner.query(
        `CREATE INDEX ${quoteIdentifier(index)} ON ${quoteTable(executions)} (${quoteIdentifier(column)})`,
      );
    }
    await queryRunner.query(`ALTER TABLE ${quoteTable(workflows)} RESET (fillfactor)`);
    await queryRunner.query(
      `CREATE INDEX IF NOT EXISTS ${quoteIdentifier(INDEX_NAMES.workflowsStepCreated)} ON ${quoteTable(workflows)} ` +
        `((COALESCE(${quoteIdentifier('current_step_name')}, ${quoteIdentifier('next_step_name')})), ` +
        `${quoteIdentifier('created_at')}, ${quoteIdentifier('id')})`,
    );
  }
}

/** A library table's schema (as TypeORM resolves it) and name, on PostgreSQL when it exists. */
async function postgresTable(
  queryRunner: QueryRunner,
  tableName: string,
): Promise<{ schema?: string; tableName: string } | null> {
  if (migrationDialectOf(queryRunner) !== 'postgres') return null;
  const table = await queryRunner.getTable(tableName);
  return table ? { schema: table.schema, tableName } : null;
}

/** An index of `table`, qualified by the table's schema (an index lives in its table's schema). */
function indexOf(table: { schema?: string }, name: string): string {
  return table.schema
    ? `${quoteIdentifier(table.schema)}.${quoteIdentifier(name)}`
    : quoteIdentifier(name);
}
