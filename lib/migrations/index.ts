import type { MigrationInterface } from 'typeorm';
import { GenevaDriveBaseSchema1764400000000 } from './base-schema.migration';
import { GenevaDriveDashboardIndexes1764400007000 } from './dashboard-indexes.migration';
import { GenevaDriveDashboardSearchIndexes1764400008000 } from './dashboard-search-indexes.migration';
import { GenevaDriveLeanStepWrites1764400009000 } from './lean-step-writes.migration';
import { GenevaDriveMariaDbJsonText1764400004000 } from './mariadb-json-text.migration';
import { GenevaDriveNoPadCollation1764400003000 } from './no-pad-collation.migration';
import { GenevaDrivePendingExecutionsIndex1764400010000 } from './pending-executions-index.migration';
import { GenevaDriveResumableSteps1764400001000 } from './resumable-steps.migration';
import { GenevaDriveSignalTimeouts1764400005000 } from './signal-timeouts.migration';
import { GenevaDriveSignals1764400002000 } from './signals.migration';
import { GenevaDriveWorkflowContext1764400006000 } from './workflow-context.migration';

export {
  GenevaDriveBaseSchema1764400000000,
  GenevaDriveResumableSteps1764400001000,
  GenevaDriveSignals1764400002000,
  GenevaDriveNoPadCollation1764400003000,
  GenevaDriveMariaDbJsonText1764400004000,
  GenevaDriveSignalTimeouts1764400005000,
  GenevaDriveWorkflowContext1764400006000,
  GenevaDriveDashboardIndexes1764400007000,
  GenevaDriveDashboardSearchIndexes1764400008000,
  GenevaDriveLeanStepWrites1764400009000,
  GenevaDrivePendingExecutionsIndex1764400010000,
};

/**
 * The library's TypeORM migrations, in order: base schema, resumable-step columns, signals, the
 * NO PAD collation of the text columns on MariaDB/MySQL, the JSON columns as text on MariaDB (both
 * no-ops elsewhere), signal wait timeouts and retention, the workflow context, the dashboard's
 * list indexes, the dashboard's hero-id and step-filter indexes, fewer index writes per step on
 * PostgreSQL (the step-filter index dropped again), and an index of each workflow's pending
 * executions on PostgreSQL (flat plans for named statements).
 * Add them to your DataSource `migrations` (beside your own) and run them.
 */
export const GENEVA_DRIVE_MIGRATIONS: Array<new () => MigrationInterface> = [
  GenevaDriveBaseSchema1764400000000,
  GenevaDriveResumableSteps1764400001000,
  GenevaDriveSignals1764400002000,
  GenevaDriveNoPadCollation1764400003000,
  GenevaDriveMariaDbJsonText1764400004000,
  GenevaDriveSignalTimeouts1764400005000,
  GenevaDriveWorkflowContext1764400006000,
  GenevaDriveDashboardIndexes1764400007000,
  GenevaDriveDashboardSearchIndexes1764400008000,
  GenevaDriveLeanStepWrites1764400009000,
  GenevaDrivePendingExecutionsIndex1764400010000,
];
