import { Injectable } from '@nestjs/common';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import { WORKFLOW_STATES } from '../common/states';
import { WorkflowRepository } from '../ports/workflow.repository';

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
    private readonly repository: WorkflowRepository,
    private readonly registry: WorkflowRegistry,
  ) {}

  async read(waitingOverdueCutoff: Date | null): Promise<GaugeReading[]> {
    const counts = await this.repository.workflowCounts();
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
    if (!this.repository.features.signals) return readings;

    const perClass = (name: string, rows: Array<{ type: string; count: number }>) => {
      readings.push({ name, value: sum(rows) });
      for (const type of new Set([...classes, ...rows.map((row) => row.type)])) {
        readings.push({
          name,
          value: sum(rows.filter((row) => row.type === type)),
          tags: { workflow: type },
        });
      }
    };
    perClass('geneva_drive.waiting_step_executions', await this.repository.waitingCounts());
    if (waitingOverdueCutoff) {
      perClass(
        'geneva_drive.waiting_overdue',
        await this.repository.waitingCounts(waitingOverdueCutoff),
      );
    }
    return readings;
  }
}

function sum(rows: ReadonlyArray<{ count: number }>): number {
  return rows.reduce((total, row) => total + row.count, 0);
}
