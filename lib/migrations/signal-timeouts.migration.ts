import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { quoteIdentifier } from '../adapters/sql-identifiers';
import { columnOf, columnTypesFor } from './column-types';
import { INDEX_NAMES, SIGNALS_TABLE, STEP_EXECUTIONS_TABLE } from './migration.constants';
import {
  dropColumnsIfExist,
  dropIndicesIfExist,
  ensureColumns,
  ensureIndices,
} from './schema-guards';

/**
 * Signal wait timeouts and retention (SPEC §16.3): `wait_deadline_at` on step executions, indexed
 * for the housekeeping sweep of overdue waits, and an index for the deletion of old pending
 * signals. MariaDB/MySQL has no partial indexes: the state leads a composite index there.
 */
export class GenevaDriveSignalTimeouts1764400005000 implements MigrationInterface {
  name = 'GenevaDriveSignalTimeouts1764400005000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = columnTypesFor(queryRunner);
    const q = (column: string): string => quoteIdentifier(column, t.dialect);
    const mysql = t.dialect === 'mysql';
    await ensureColumns(queryRunner, STEP_EXECUTIONS_TABLE, [
      new TableColumn(columnOf('wait_deadline_at', t.timestamp, { isNullable: true })),
    ]);
    await ensureIndices(queryRunner, STEP_EXECUTIONS_TABLE, [
      mysql
        ? new TableIndex({
            name: INDEX_NAMES.stepExecutionsWaitDeadline,
            columnNames: ['state', 'wait_deadline_at'],
          })
        : new TableIndex({
            name: INDEX_NAMES.stepExecutionsWaitDeadline,
            columnNames: ['wait_deadline_at'],
            where: `${q('state')} = 'waiting'`,
          }),
    ]);
    await ensureIndices(queryRunner, SIGNALS_TABLE, [
      mysql
        ? new TableIndex({
            name: INDEX_NAMES.signalsPendingCreated,
            columnNames: ['state', 'created_at'],
          })
        : new TableIndex({
            name: INDEX_NAMES.signalsPendingCreated,
            columnNames: ['created_at'],
            where: `${q('state')} = 'pending'`,
          }),
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropIndicesIfExist(queryRunner, SIGNALS_TABLE, [INDEX_NAMES.signalsPendingCreated]);
    await dropIndicesIfExist(queryRunner, STEP_EXECUTIONS_TABLE, [
      INDEX_NAMES.stepExecutionsWaitDeadline,
    ]);
    await dropColumnsIfExist(queryRunner, STEP_EXECUTIONS_TABLE, ['wait_deadline_at']);
  }
}
