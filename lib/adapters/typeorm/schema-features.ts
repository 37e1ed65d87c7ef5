import type { DataSource } from 'typeorm';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import type { SchemaFeatures } from '../../ports/workflow.repository';
import { WorkflowEntity } from '../../entities/workflow.entity';
import {
  RESUMABLE_COLUMNS,
  SIGNAL_COLUMNS,
  WAIT_TIMEOUT_COLUMNS,
  WORKFLOW_CONTEXT_COLUMNS,
} from '../optional-columns';

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
    const workflows = dataSource.getMetadata(WorkflowEntity).tablePath;
    const hasAll = async (columns: readonly string[], table = executions) => {
      for (const column of columns) if (!(await runner.hasColumn(table, column))) return false;
      return true;
    };
    const resumable = await hasAll(RESUMABLE_COLUMNS);
    const signals =
      (await runner.hasTable(dataSource.getMetadata('SignalEntity').tablePath)) &&
      (await hasAll(SIGNAL_COLUMNS));
    const waitTimeouts = signals && (await hasAll(WAIT_TIMEOUT_COLUMNS));
    const workflowContext = await hasAll(WORKFLOW_CONTEXT_COLUMNS, workflows);
    return { resumable, signals, waitTimeouts, workflowContext };
  } finally {
    await runner.release();
  }
}
