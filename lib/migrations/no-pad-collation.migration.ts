import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { columnOf, columnTypesFor, type DialectColumnTypes } from './column-types';
import { SIGNALS_TABLE, STEP_EXECUTIONS_TABLE, WORKFLOWS_TABLE } from './migration.constants';
import {
  mysqlEnsureCollation,
  mysqlNoPadBinaryCollation,
  PAD_SPACE_BINARY_COLLATION,
} from './mysql-schema';

/**
 * Every text column of the three tables, restated exactly as the earlier migrations create it
 * (MODIFY COLUMN takes the whole definition). The JSON columns are not among them: MariaDB keeps
 * its `json` columns in utf8mb4_bin whatever the table's default, and nothing compares them.
 */
function textColumns(t: DialectColumnTypes): Record<string, TableColumn[]> {
  const column = (
    name: string,
    spec: DialectColumnTypes['id'],
    options: { isNullable?: boolean; default?: string } = {},
  ) => new TableColumn(columnOf(name, spec, options));
  const nullable = { isNullable: true };
  return {
    [WORKFLOWS_TABLE]: [
      column('id', t.id),
      column('type', t.string),
      column('hero_type', t.string, nullable),
      column('hero_id', t.string, nullable),
      column('state', t.string, { default: "'ready'" }),
      column('current_step_name', t.string, nullable),
      column('next_step_name', t.string, nullable),
      // Added later, by the workflow-context migration; absent columns are passed over.
      column('trace_parent', t.string, nullable),
    ],
    [STEP_EXECUTIONS_TABLE]: [
      column('id', t.id),
      column('workflow_id', t.id),
      column('step_name', t.string),
      column('state', t.string, { default: "'scheduled'" }),
      column('outcome', t.string, nullable),
      column('error_class_name', t.string, nullable),
      column('error_message', t.text, nullable),
      column('error_backtrace', t.text, nullable),
      column('job_id', t.string, nullable),
      column('continues_from_id', t.id, nullable),
      column('signal_id', t.id, nullable),
    ],
    [SIGNALS_TABLE]: [
      column('id', t.id),
      column('workflow_id', t.id),
      column('name', t.string),
      column('idempotency_key', t.string, nullable),
      column('state', t.string, { default: "'pending'" }),
    ],
  };
}

/**
 * MariaDB/MySQL: gives the library's tables and their text columns (ids, workflow type, hero type
 * and id, states, step names, signal names, idempotency keys, job ids, error texts) a NO PAD
 * binary collation: `utf8mb4_nopad_bin` on MariaDB, `utf8mb4_0900_bin` on MySQL 8, refusing a
 * server with neither. The base schema used `utf8mb4_bin`, which is PAD SPACE: `'evt-1'` and
 * `'evt-1 '` compared equal, so a signal with the second key was taken for a redelivery of the
 * first, and `list({ hero })` for hero id `'twin'` also returned the workflows of `'twin '`. The
 * unique indexes (signal dedupe, the stored generated ongoing-per-hero and active-execution keys,
 * which hash the exact bytes) are rebuilt by the same ALTER TABLE. Installs made after this
 * migration existed get the NO PAD collation from the base schema already; this one then does
 * nothing. A no-op on PostgreSQL and SQLite, whose text comparisons are exact.
 *
 * Each table is one ALTER TABLE (DDL commits implicitly there), skipped when it has the collation
 * already, so a re-run after a partial failure completes. `down()` restores `utf8mb4_bin`; it fails
 * with a duplicate-key error if rows that differ only by trailing spaces meanwhile share a unique
 * index (two idempotency keys `'a'` and `'a '` of one signal name and workflow).
 */
export class GenevaDriveNoPadCollation1764400003000 implements MigrationInterface {
  name = 'GenevaDriveNoPadCollation1764400003000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = columnTypesFor(queryRunner);
    if (t.dialect !== 'mysql') return;
    const collation = await mysqlNoPadBinaryCollation(queryRunner);
    for (const [table, columns] of Object.entries(textColumns(t))) {
      await mysqlEnsureCollation(queryRunner, table, columns, collation);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const t = columnTypesFor(queryRunner);
    if (t.dialect !== 'mysql') return;
    for (const [table, columns] of Object.entries(textColumns(t)).reverse()) {
      await mysqlEnsureCollation(queryRunner, table, columns, PAD_SPACE_BINARY_COLLATION);
    }
  }
}
