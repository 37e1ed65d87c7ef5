import type { MigrationInterface, QueryRunner } from 'typeorm';
import { quoteIdentifier } from '../adapters/sql-identifiers';
import { INDEX_NAMES, STEP_EXECUTIONS_TABLE } from './migration.constants';
import { createIndexSql, dropIndexSql, postgresTable } from './postgres-indexes';

/** The columns of `INDEX_NAMES.stepExecutionsPending`, in order. */
const PENDING_COLUMNS = ['workflow_id', 'created_at', 'id'] as const;

/** The rows it holds: the states the stray sweep and the read of parked steps ask for. */
const PENDING_PREDICATE_SQL = `${quoteIdentifier('state')} IN ('scheduled', 'waiting')`;

/**
 * PostgreSQL only: an index of each workflow's pending (scheduled or waiting) executions, oldest
 * first, that holds no other row. The stray sweep of every step and a signal's read of a
 * workflow's parked steps ask for exactly these rows. With named statements
 * (`preparedStatements: true`) a connection keeps the generic plan it built over a new app's
 * near-empty, never-analyzed tables until an ANALYZE; such a plan seeks `(workflow_id, state)` by
 * workflow alone and filters the state, so every step read the workflow's whole history (a step
 * 10,000 steps deep cost 1.3–1.4× a fresh workflow's). Whatever plan reads this index reads only
 * pending rows. A step's INSERT of the next execution (`in_progress`) and its UPDATE finishing the
 * current one write no entry into it. A no-op on MariaDB, MySQL and SQLite (their statements are
 * planned at every run).
 */
export class GenevaDrivePendingExecutionsIndex1764400010000 implements MigrationInterface {
  name = 'GenevaDrivePendingExecutionsIndex1764400010000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const executions = await postgresTable(queryRunner, STEP_EXECUTIONS_TABLE);
    if (!executions) return;
    await queryRunner.query(
      createIndexSql(executions, INDEX_NAMES.stepExecutionsPending, PENDING_COLUMNS, {
        ifNotExists: true,
        whereSql: PENDING_PREDICATE_SQL,
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const executions = await postgresTable(queryRunner, STEP_EXECUTIONS_TABLE);
    if (!executions) return;
    await queryRunner.query(dropIndexSql(executions, INDEX_NAMES.stepExecutionsPending));
  }
}
