import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';
import { INDEX_NAMES, WORKFLOWS_TABLE } from './migration.constants';
import { dropIndicesIfExist, ensureIndices } from './schema-guards';

/**
 * The dashboard's workflow list (SPEC §16.4) pages newest first on `(created_at, id)`, with or
 * without a state filter: one index for each, so a page reads its rows from the index in order
 * instead of sorting the table.
 */
export class GenevaDriveDashboardIndexes1764400007000 implements MigrationInterface {
  name = 'GenevaDriveDashboardIndexes1764400007000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await ensureIndices(queryRunner, WORKFLOWS_TABLE, [
      new TableIndex({ name: INDEX_NAMES.workflowsCreated, columnNames: ['created_at', 'id'] }),
      new TableIndex({
        name: INDEX_NAMES.workflowsStateCreated,
        columnNames: ['state', 'created_at', 'id'],
      }),
    ]);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await dropIndicesIfExist(queryRunner, WORKFLOWS_TABLE, [
      INDEX_NAMES.workflowsStateCreated,
      INDEX_NAMES.workflowsCreated,
    ]);
  }
}
