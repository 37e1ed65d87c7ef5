import { TableColumn, TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { columnOf, columnTypesFor } from './column-types';
import { INDEX_NAMES, STEP_EXECUTIONS_TABLE } from './migration.constants';
import {
  dropColumnsIfExist,
  dropIndicesIfExist,
  ensureColumns,
  ensureIndices,
  ensureJsonText,
} from './schema-guards';

/**
 * Adds the resumable-step columns to `geneva_drive_step_executions`: `cursor` (JSON) and
 * `continues_from_id`, the link to the predecessor execution of a resumable chain (SPEC §9).
 */
export class GenevaDriveResumableSteps1764400001000 implements MigrationInterface {
  name = 'GenevaDriveResumableSteps1764400001000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = columnTypesFor(queryRunner);
    await ensureColumns(queryRunner, STEP_EXECUTIONS_TABLE, [
      new TableColumn(columnOf('cursor', t.json, { isNullable: true })),
      // Indexed but no foreign key, as in the gem: it would force table rebuilds on SQLite.
      new TableColumn(columnOf('continues_from_id', t.id, { isNullable: true })),
    ]);
    await ensureJsonText(queryRunner, STEP_EXECUTIONS_TABLE);
    await ensureIndices(queryRunner, STEP_EXECUTIONS_TABLE, [
      new TableIndex({
        name: INDEX_NAMES.stepExecutionsContinuesFrom,
        columnNames: ['continues_from_id'],
      }),
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropIndicesIfExist(queryRunner, STEP_EXECUTIONS_TABLE, [
      INDEX_NAMES.stepExecutionsContinuesFrom,
    ]);
    await dropColumnsIfExist(queryRunner, STEP_EXECUTIONS_TABLE, ['cursor', 'continues_from_id']);
  }
}
