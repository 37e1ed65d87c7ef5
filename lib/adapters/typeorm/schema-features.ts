import type { DataSource } from 'typeorm';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import type { SchemaFeatures } from '../../ports/workflow.repository';
import { RESUMABLE_COLUMNS, SIGNAL_COLUMNS, WAIT_TIMEOUT_COLUMNS } from '../optional-columns';

/**
 * The library's own tables, as the base migration creates them, that are missing from the
 * database (empty when they exist).
 */
export async function missingBaseTables(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  try {
    const missing: string[] = [];
    for (const entity of ['WorkflowEntity', 'StepExecutionEntity']) {
      const { tablePath } = dataSource.getMetadata(entity);
      if (!(await runner.hasTable(tablePath))) missing.push(tablePath);
    }
    return missing;
  } finally {
    await runner.release();
  }
}

/**
 * Looks the optional columns and table up in the database. Column by column rather than through
 * `getTable()`, which on MariaDB/MySQL also reads `typeorm_metadata` for the generated key columns.
 */
export async function detectSchemaFeatures(dataSource: DataSource): Promise<SchemaFeatures> {
  const runner = dataSource.createQueryRunner();
  try {
    const executions = dataSource.getMetadata(StepExecutionEntity).tablePath;
    const hasAll = async (columns: readonly string[]) => {
      for (const column of columns) if (!(await runner.hasColumn(executions, column))) return false;
      return true;
    };
    const resumable = await hasAll(RESUMABLE_COLUMNS);
    const signals =
      (await runner.hasTable(dataSource.getMetadata('SignalEntity').tablePath)) &&
      (await hasAll(SIGNAL_COLUMNS));
    const waitTimeouts = signals && (await hasAll(WAIT_TIMEOUT_COLUMNS));
    return { resumable, signals, waitTimeouts };
  } finally {
    await runner.release();
  }
}
