import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { quoteIdentifier, quoteTable } from '../adapters/sql-identifiers';
import { migrationDialectOf } from './column-types';
import { INDEX_NAMES, STEP_EXECUTIONS_TABLE, WORKFLOWS_TABLE } from './migration.constants';
import { dropIndicesIfExist, ensureIndices } from './schema-guards';

/**
 * Three more of the dashboard's list filters (SPEC §16.4) on an index, found by `npm run
 * bench:dashboard` at 1M workflows and 10M executions:
 * - the search box matches a hero id whatever its hero type: `hero_id` alone, which the hero index
 *   `(hero_type, hero_id)` cannot serve (the page read the whole index);
 * - "waiting longer than": the executions parked since before an instant, with their workflow ids,
 *   from a small partial index (no step execution row is read); on MariaDB/MySQL, which has no
 *   partial indexes, the `(state, scheduled_for)` index keeps finding the parked rows;
 * - "the step the workflow is at", `COALESCE(current_step_name, next_step_name)`: on PostgreSQL an
 *   expression index `(COALESCE(...), created_at, id)`, so its pages are keyset pages too (without
 *   it a page reads rows until it has found a page of matches). MariaDB and MySQL cannot index an
 *   expression without a generated column, and TypeORM rebuilds SQLite tables from column-only
 *   index definitions: there the step filter still reads the list until its page is full.
 */
export class GenevaDriveDashboardSearchIndexes1764400008000 implements MigrationInterface {
  name = 'GenevaDriveDashboardSearchIndexes1764400008000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const dialect = migrationDialectOf(queryRunner);
    await ensureIndices(queryRunner, WORKFLOWS_TABLE, [
      new TableIndex({ name: INDEX_NAMES.workflowsHeroId, columnNames: ['hero_id'] }),
    ]);
    if (dialect === 'mysql') return;
    await ensureIndices(queryRunner, STEP_EXECUTIONS_TABLE, [
      new TableIndex({
        name: INDEX_NAMES.stepExecutionsWaitingSince,
        columnNames: ['waiting_since', 'workflow_id'],
        where: `${quoteIdentifier('state', dialect)} = 'waiting'`,
      }),
    ]);
    if (dialect !== 'postgres') return;
    const table = await workflowsTable(queryRunner);
    if (!table) throw new Error(`Table ${WORKFLOWS_TABLE} does not exist`);
    await queryRunner.query(createStepFilterIndexSql(table));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const table =
      migrationDialectOf(queryRunner) === 'postgres' ? await workflowsTable(queryRunner) : null;
    if (table) {
      // The index lives in its table's schema.
      const owner = table.schema ? `${q(table.schema)}.` : '';
      await queryRunner.query(
        `DROP INDEX IF EXISTS ${owner}${q(INDEX_NAMES.workflowsStepCreated)}`,
      );
    }
    await dropIndicesIfExist(queryRunner, STEP_EXECUTIONS_TABLE, [
      INDEX_NAMES.stepExecutionsWaitingSince,
    ]);
    await dropIndicesIfExist(queryRunner, WORKFLOWS_TABLE, [INDEX_NAMES.workflowsHeroId]);
  }
}

/**
 * PostgreSQL: the step filter's expression index on `table` (TypeORM's TableIndex takes columns
 * only, so it is plain SQL), if it does not exist. Also what undoing the lean-writes migration
 * restores.
 */
export function createStepFilterIndexSql(table: { schema?: string; tableName: string }): string {
  return (
    `CREATE INDEX IF NOT EXISTS ${q(INDEX_NAMES.workflowsStepCreated)} ON ${quoteTable(table)} ` +
    `((COALESCE(${q('current_step_name')}, ${q('next_step_name')})), ${q('created_at')}, ${q('id')})`
  );
}

/** PostgreSQL names in the migration's plain SQL. */
function q(name: string): string {
  return quoteIdentifier(name);
}

/** The workflows table's schema (as TypeORM resolves it: the DataSource's) and name, if it exists. */
async function workflowsTable(
  queryRunner: QueryRunner,
): Promise<{ schema?: string; tableName: string } | null> {
  const table = await queryRunner.getTable(WORKFLOWS_TABLE);
  return table ? { schema: table.schema, tableName: WORKFLOWS_TABLE } : null;
}
