import {
  Table,
  TableForeignKey,
  TableIndex,
  type MigrationInterface,
  type QueryRunner,
} from 'typeorm';
import { quoteIdentifier } from '../adapters/sql-identifiers';
import { columnOf, columnTypesFor } from './column-types';
import {
  FOREIGN_KEY_NAMES,
  GENERATED_KEY_COLUMNS,
  INDEX_NAMES,
  STEP_EXECUTIONS_TABLE,
  WORKFLOWS_TABLE,
} from './migration.constants';
import { mysqlEnsureGeneratedUniqueKey } from './mysql-schema';
import { dropTableIfExists, ensureIndices, ensureJsonText, ensureTable } from './schema-guards';

/**
 * Creates `geneva_drive_workflows` and `geneva_drive_step_executions` with their indexes, the
 * one-ongoing-workflow-per-hero and one-active-execution-per-workflow uniqueness rules (SPEC §3).
 * The resumable-step and signal columns come from the two later migrations. On MariaDB/MySQL the
 * two partial unique indexes are stored generated columns with a unique index (SPEC §15.8), the
 * in-progress `started_at` index is `(state, started_at)`, there are no foreign keys, the
 * tables default to a NO PAD binary collation (column-types.ts), so text compares exactly, and on
 * MariaDB the JSON columns are text with a named JSON_VALID check (ensureJsonText).
 */
export class GenevaDriveBaseSchema1764400000000 implements MigrationInterface {
  name = 'GenevaDriveBaseSchema1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = columnTypesFor(queryRunner);
    // Column names in raw predicates and generated-column expressions, quoted for this dialect.
    const q = (column: string): string => quoteIdentifier(column, t.dialect);
    const nullable = { isNullable: true };
    const mysql = t.dialect === 'mysql';

    // No timestamp defaults: the library writes every timestamp from the application clock.
    await ensureTable(
      queryRunner,
      new Table({
        name: WORKFLOWS_TABLE,
        columns: [
          columnOf('id', t.id, { isPrimary: true }),
          columnOf('type', t.string),
          columnOf('hero_type', t.string, nullable),
          columnOf('hero_id', t.string, nullable),
          columnOf('state', t.string, { default: "'ready'" }),
          columnOf('current_step_name', t.string, nullable),
          columnOf('next_step_name', t.string, nullable),
          columnOf('allow_multiple', t.boolean, { default: t.falseLiteralSql }),
          columnOf('transitioned_at', t.timestamp, nullable),
          columnOf('metadata', t.json, nullable),
          columnOf('created_at', t.timestamp),
          columnOf('updated_at', t.timestamp),
        ],
      }),
    );
    await ensureJsonText(queryRunner, WORKFLOWS_TABLE);
    await ensureIndices(queryRunner, WORKFLOWS_TABLE, [
      new TableIndex({ name: INDEX_NAMES.workflowsType, columnNames: ['type'] }),
      new TableIndex({ name: INDEX_NAMES.workflowsState, columnNames: ['state'] }),
      new TableIndex({ name: INDEX_NAMES.workflowsHero, columnNames: ['hero_type', 'hero_id'] }),
    ]);
    if (mysql) {
      // CONCAT_WS with a separator no name contains: a plain CONCAT would collide across field
      // boundaries, and CONCAT_WS skips NULLs, hence the explicit hero_id test.
      await mysqlEnsureGeneratedUniqueKey(queryRunner, WORKFLOWS_TABLE, {
        column: GENERATED_KEY_COLUMNS.workflowsOngoing,
        index: INDEX_NAMES.workflowsUniqueOngoing,
        expressionSql:
          `IF(${q('state')} NOT IN ('finished', 'canceled') AND ${q('allow_multiple')} = 0 AND ${q('hero_id')} IS NOT NULL, ` +
          `UNHEX(MD5(CONCAT_WS(CHAR(31), ${q('type')}, ${q('hero_type')}, ${q('hero_id')}))), NULL)`,
      });
    } else {
      await ensureIndices(queryRunner, WORKFLOWS_TABLE, [
        // NULLs are distinct in unique indexes, so heroless workflows never collide.
        new TableIndex({
          name: INDEX_NAMES.workflowsUniqueOngoing,
          columnNames: ['type', 'hero_type', 'hero_id'],
          isUnique: true,
          where: `${q('state')} NOT IN ('finished', 'canceled') AND ${q('allow_multiple')} = ${t.falseLiteralSql}`,
        }),
      ]);
    }

    await ensureTable(
      queryRunner,
      new Table({
        name: STEP_EXECUTIONS_TABLE,
        columns: [
          columnOf('id', t.id, { isPrimary: true }),
          columnOf('workflow_id', t.id),
          columnOf('step_name', t.string),
          columnOf('state', t.string, { default: "'scheduled'" }),
          columnOf('outcome', t.string, nullable),
          columnOf('scheduled_for', t.timestamp),
          columnOf('started_at', t.timestamp, nullable),
          columnOf('completed_at', t.timestamp, nullable),
          columnOf('failed_at', t.timestamp, nullable),
          columnOf('canceled_at', t.timestamp, nullable),
          columnOf('skipped_at', t.timestamp, nullable),
          columnOf('finished_at', t.timestamp, nullable),
          columnOf('error_class_name', t.string, nullable),
          columnOf('error_message', t.text, nullable),
          columnOf('error_backtrace', t.text, nullable),
          columnOf('job_id', t.string, nullable),
          columnOf('metadata', t.json, nullable),
          columnOf('created_at', t.timestamp),
          columnOf('updated_at', t.timestamp),
        ],
        foreignKeys: [
          new TableForeignKey({
            name: FOREIGN_KEY_NAMES.stepExecutionsWorkflow,
            columnNames: ['workflow_id'],
            referencedTableName: WORKFLOWS_TABLE,
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          }),
        ],
      }),
    );
    await ensureJsonText(queryRunner, STEP_EXECUTIONS_TABLE);
    await ensureIndices(queryRunner, STEP_EXECUTIONS_TABLE, [
      new TableIndex({
        name: INDEX_NAMES.stepExecutionsScheduled,
        columnNames: ['state', 'scheduled_for'],
      }),
      new TableIndex({
        name: INDEX_NAMES.stepExecutionsWorkflowCreated,
        columnNames: ['workflow_id', 'created_at'],
      }),
      new TableIndex({
        name: INDEX_NAMES.stepExecutionsWorkflowState,
        columnNames: ['workflow_id', 'state'],
      }),
      new TableIndex({ name: INDEX_NAMES.stepExecutionsFinishedAt, columnNames: ['finished_at'] }),
      // Lets stuck-in-progress recovery find old rows without walking every running one (no
      // partial indexes on MariaDB/MySQL: the state leads a composite index there instead).
      mysql
        ? new TableIndex({
            name: INDEX_NAMES.stepExecutionsInProgressStartedAt,
            columnNames: ['state', 'started_at'],
          })
        : new TableIndex({
            name: INDEX_NAMES.stepExecutionsInProgressStartedAt,
            columnNames: ['started_at'],
            where: `${q('state')} = 'in_progress'`,
          }),
    ]);
    // `waiting` is deliberately outside: a parked execution holds no slot (reference §1.2).
    if (mysql) {
      await mysqlEnsureGeneratedUniqueKey(queryRunner, STEP_EXECUTIONS_TABLE, {
        column: GENERATED_KEY_COLUMNS.stepExecutionsActive,
        index: INDEX_NAMES.stepExecutionsOneActive,
        // RTRIM: MariaDB refuses a CHAR column in a generated expression as is (its value would
        // depend on the PAD_CHAR_TO_FULL_LENGTH sql_mode); ids have no trailing spaces.
        expressionSql: `IF(${q('state')} IN ('scheduled', 'in_progress'), UNHEX(MD5(RTRIM(${q('workflow_id')}))), NULL)`,
      });
    } else {
      await ensureIndices(queryRunner, STEP_EXECUTIONS_TABLE, [
        new TableIndex({
          name: INDEX_NAMES.stepExecutionsOneActive,
          columnNames: ['workflow_id'],
          isUnique: true,
          where: `${q('state')} IN ('scheduled', 'in_progress')`,
        }),
      ]);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropTableIfExists(queryRunner, STEP_EXECUTIONS_TABLE);
    await dropTableIfExists(queryRunner, WORKFLOWS_TABLE);
  }
}
