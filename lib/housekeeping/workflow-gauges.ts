import { Injectable } from '@nestjs/common';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import { StepExecutionEntity } from '../entities/step-execution.entity';
import { WorkflowEntity } from '../entities/workflow.entity';
import type { WorkflowState } from '../interfaces/states.interface';
import { GenevaDriveDataSource } from '../persistence/geneva-drive-data-source';

const WORKFLOW_STATES: readonly WorkflowState[] = [
  'ready',
  'performing',
  'paused',
  'finished',
  'canceled',
];

/** One gauge reading. */
export interface GaugeReading {
  name: string;
  value: number;
  tags?: Record<string, string>;
}

/**
 * The housekeeping gauges, all from grouped queries:
 * - `geneva_drive.<state>` for every workflow state: the total, and per class (tag `workflow`);
 * - `geneva_drive.paused_ratio` per class: paused ÷ all workflows of that class (0..1);
 * - `geneva_drive.waiting_step_executions`: parked executions, total and per class;
 * - `geneva_drive.waiting_overdue`: parked longer than `waitingVisibilityThreshold`, total and
 *   per class (not read at all when the threshold is null).
 * Every registered class and every class found in the table gets a value, zeros included, so a
 * gauge falls back to 0 instead of keeping its last value. The waiting gauges are skipped while
 * the signals migration has not run.
 */
@Injectable()
export class WorkflowGauges {
  constructor(
    private readonly database: GenevaDriveDataSource,
    private readonly registry: WorkflowRegistry,
  ) {}

  async read(waitingOverdueCutoff: Date | null): Promise<GaugeReading[]> {
    return this.database.transaction(async (uow) => {
      const counts = await (await uow.manager())
        .createQueryBuilder(WorkflowEntity, 'workflow')
        .select('workflow.type', 'type')
        .addSelect('workflow.state', 'state')
        .addSelect('COUNT(*)', 'count')
        .groupBy('workflow.type')
        .addGroupBy('workflow.state')
        .getRawMany<{ type: string; state: WorkflowState; count: string | number }>();
      const classes = new Set([
        ...this.registry.all().map((definition) => definition.name),
        ...counts.map((row) => row.type),
      ]);
      const readings: GaugeReading[] = [];
      for (const state of WORKFLOW_STATES) {
        const rows = counts.filter((row) => row.state === state);
        readings.push({ name: `geneva_drive.${state}`, value: sum(rows) });
        for (const type of classes) {
          readings.push({
            name: `geneva_drive.${state}`,
            value: sum(rows.filter((row) => row.type === type)),
            tags: { workflow: type },
          });
        }
      }
      for (const type of classes) {
        const rows = counts.filter((row) => row.type === type);
        const total = sum(rows);
        const paused = sum(rows.filter((row) => row.state === 'paused'));
        readings.push({
          name: 'geneva_drive.paused_ratio',
          value: total === 0 ? 0 : paused / total,
          tags: { workflow: type },
        });
      }
      if (!this.database.features.signals) return readings;

      const manager = await uow.manager();
      const waitingQuery = () =>
        manager
          .createQueryBuilder(StepExecutionEntity, 'execution')
          .innerJoin(WorkflowEntity, 'workflow', 'workflow.id = execution.workflowId')
          .select('workflow.type', 'type')
          .addSelect('COUNT(*)', 'count')
          .where("execution.state = 'waiting'")
          .groupBy('workflow.type');
      const perClass = (name: string, rows: Array<{ type: string; count: string | number }>) => {
        readings.push({ name, value: sum(rows) });
        for (const type of new Set([...classes, ...rows.map((row) => row.type)])) {
          readings.push({
            name,
            value: sum(rows.filter((row) => row.type === type)),
            tags: { workflow: type },
          });
        }
      };
      perClass('geneva_drive.waiting_step_executions', await waitingQuery().getRawMany());
      if (waitingOverdueCutoff) {
        const overdue = await waitingQuery()
          .andWhere('execution.waitingSince < :cutoff', { cutoff: waitingOverdueCutoff })
          .getRawMany<{ type: string; count: string | number }>();
        perClass('geneva_drive.waiting_overdue', overdue);
      }
      return readings;
    });
  }
}

/** PostgreSQL returns COUNT(*) as a string. */
function sum(rows: ReadonlyArray<{ count: string | number }>): number {
  return rows.reduce((total, row) => total + Number(row.count), 0);
}
