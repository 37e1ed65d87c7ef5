import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { columnOf, columnTypesFor } from './column-types';
import { WORKFLOWS_TABLE } from './migration.constants';
import { dropColumnsIfExist, ensureColumns } from './schema-guards';

/**
 * Caller context and tracing (SPEC §16.6): the `context` JSON given to `start()` (CLS keys merged
 * in) and the W3C traceparent of the `start()` call, both nullable on workflows.
 */
export class GenevaDriveWorkflowContext1764400006000 implements MigrationInterface {
  name = 'GenevaDriveWorkflowContext1764400006000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const t = columnTypesFor(queryRunner);
    await ensureColumns(queryRunner, WORKFLOWS_TABLE, [
      new TableColumn(columnOf('context', t.json, { isNullable: true })),
      new TableColumn(columnOf('trace_parent', t.string, { isNullable: true })),
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropColumnsIfExist(queryRunner, WORKFLOWS_TABLE, ['context', 'trace_parent']);
  }
}
