import type { DataSource } from 'typeorm';
import { StepExecutionEntity } from '../../entities/step-execution.entity';

/** Which optional migrations have run (code may be deployed before its migration). */
export interface SchemaFeatures {
  /** `cursor` and `continues_from_id` exist (the resumable-steps migration). */
  resumable: boolean;
  /** The signals table, `signal_id` and `waiting_since` exist (the signals migration). */
  signals: boolean;
}

const RESUMABLE_COLUMNS = ['cursor', 'continues_from_id'];
const SIGNAL_COLUMNS = ['signal_id', 'waiting_since'];

/**
 * Looks the optional columns and table up in the database. Column by column rather than through
 * `getTable()`, which on MariaDB/MySQL also reads `typeorm_metadata` for the generated key columns.
 */
export async function detectSchemaFeatures(dataSource: DataSource): Promise<SchemaFeatures> {
  const runner = dataSource.createQueryRunner();
  try {
    const executions = dataSource.getMetadata(StepExecutionEntity).tablePath;
    const hasAll = async (columns: string[]) => {
      for (const column of columns) if (!(await runner.hasColumn(executions, column))) return false;
      return true;
    };
    const resumable = await hasAll(RESUMABLE_COLUMNS);
    const signals =
      (await runner.hasTable(dataSource.getMetadata('SignalEntity').tablePath)) &&
      (await hasAll(SIGNAL_COLUMNS));
    return { resumable, signals };
  } finally {
    await runner.release();
  }
}

/** Whether a column of the library's tables exists, given which optional migrations have run. */
export function isColumnPresent(features: SchemaFeatures, databaseName: string): boolean {
  if (RESUMABLE_COLUMNS.includes(databaseName)) return features.resumable;
  if (SIGNAL_COLUMNS.includes(databaseName)) return features.signals;
  return true;
}

/**
 * Hides the columns of a migration that has not run from every ordinary read and write, so
 * everything else keeps working; shows them again once they exist.
 */
export function applyColumnVisibility(dataSource: DataSource, features: SchemaFeatures): void {
  const metadata = dataSource.getMetadata(StepExecutionEntity);
  for (const column of metadata.columns) {
    const visible = isColumnPresent(features, column.databaseName);
    column.isSelect = visible;
    column.isInsert = visible;
    column.isUpdate = visible;
  }
}
