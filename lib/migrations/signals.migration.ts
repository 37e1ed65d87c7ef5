import {
  Table,
  TableColumn,
  TableForeignKey,
  TableIndex,
  type MigrationInterface,
  type QueryRunner,
} from 'typeorm';
import { columnOf, columnTypesFor } from './column-types';
import {
  FOREIGN_KEY_NAMES,
  INDEX_NAMES,
  SIGNALS_TABLE,
  STEP_EXECUTIONS_TABLE,
  WORKFLOWS_TABLE,
} from './migration.constants';
import {
  dropColumnsIfExist,
  dropIndicesIfExist,
  dropTableIfExists,
  ensureColumns,
  ensureIndices,
  ensureJsonText,
  ensureTable,
} from './schema-guards';

/**
 * Creates `geneva_drive_signals` and adds `signal_id` (the attachment pin) and `waiting_since`
 * (when an execution parked) to `geneva_drive_step_executions` (SPEC §8).
 */
export class GenevaDriveSignals1764400002000 implements MigrationInterface {
  name = 'GenevaDriveSignals1764400002000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = columnTypesFor(queryRunner);
    const nullable = { isNullable: true };

    await ensureTable(
      queryRunner,
      new Table({
        name: SIGNALS_TABLE,
        columns: [
          columnOf('id', t.id, { isPrimary: true }),
          columnOf('workflow_id', t.id),
          columnOf('name', t.string),
          columnOf('idempotency_key', t.string, nullable),
          columnOf('state', t.string, { default: "'pending'" }),
          columnOf('payload', t.json, nullable),
          columnOf('claimed_at', t.timestamp, nullable),
          columnOf('consumed_at', t.timestamp, nullable),
          // integer, not bigint: PostgreSQL returns bigint as a string (SPEC §15.6).
          columnOf('claimed', t.integer, { default: '0' }),
          columnOf('consumed', t.integer, { default: '0' }),
          columnOf('created_at', t.timestamp),
          columnOf('updated_at', t.timestamp),
        ],
        foreignKeys: [
          new TableForeignKey({
            name: FOREIGN_KEY_NAMES.signalsWorkflow,
            columnNames: ['workflow_id'],
            referencedTableName: WORKFLOWS_TABLE,
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          }),
        ],
      }),
    );
    await ensureJsonText(queryRunner, SIGNALS_TABLE);
    await ensureIndices(queryRunner, SIGNALS_TABLE, [
      // A NULL idempotency key never deduplicates (NULLs are distinct).
      new TableIndex({
        name: INDEX_NAMES.signalsDedup,
        columnNames: ['workflow_id', 'name', 'idempotency_key'],
        isUnique: true,
      }),
      new TableIndex({
        name: INDEX_NAMES.signalsWorkflowState,
        columnNames: ['workflow_id', 'state'],
      }),
    ]);

    await ensureColumns(queryRunner, STEP_EXECUTIONS_TABLE, [
      // Indexed, no foreign key (as in the gem): signals are deleted only with their workflow.
      new TableColumn(columnOf('signal_id', t.id, nullable)),
      new TableColumn(columnOf('waiting_since', t.timestamp, nullable)),
    ]);
    await ensureIndices(queryRunner, STEP_EXECUTIONS_TABLE, [
      new TableIndex({ name: INDEX_NAMES.stepExecutionsSignal, columnNames: ['signal_id'] }),
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropIndicesIfExist(queryRunner, STEP_EXECUTIONS_TABLE, [
      INDEX_NAMES.stepExecutionsSignal,
    ]);
    await dropColumnsIfExist(queryRunner, STEP_EXECUTIONS_TABLE, ['signal_id', 'waiting_since']);
    await dropTableIfExists(queryRunner, SIGNALS_TABLE);
  }
}
