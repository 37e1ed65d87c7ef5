import { Injectable } from '@nestjs/common';
import { WorkflowRepository } from '../ports/workflow.repository';

/** Rows deleted by one cleanup pass. */
export interface CleanupCounts {
  workflows: number;
  stepExecutions: number;
  signals: number;
}

/**
 * Deletes finished and canceled workflows whose `transitioned_at` is older than the cutoff, with
 * their step executions and signals. Children are deleted explicitly (MariaDB has no foreign
 * keys), every statement touches at most `batchSize` rows, and each runs in its own short
 * transaction. Ongoing and paused workflows are never selected, however old.
 */
@Injectable()
export class CompletedWorkflowCleaner {
  constructor(private readonly repository: WorkflowRepository) {}

  async clean(cutoff: Date, batchSize: number, shouldStop: () => boolean): Promise<CleanupCounts> {
    const counts: CleanupCounts = { workflows: 0, stepExecutions: 0, signals: 0 };
    while (!shouldStop()) {
      const ids = await this.repository.finishedWorkflowIds(cutoff, batchSize);
      if (ids.length === 0) break;
      counts.stepExecutions += await this.deleteChildren('executions', ids, batchSize);
      if (this.repository.features.signals) {
        counts.signals += await this.deleteChildren('signals', ids, batchSize);
      }
      const deleted = await this.repository.deleteFinishedWorkflows(ids, cutoff);
      counts.workflows += deleted;
      if (ids.length < batchSize || deleted === 0) break;
    }
    return counts;
  }

  /** Deletes the executions or signals of the workflows, `batchSize` rows per statement. */
  private async deleteChildren(
    kind: 'executions' | 'signals',
    workflowIds: string[],
    batchSize: number,
  ): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.repository.deleteChildren(kind, workflowIds, batchSize);
      total += deleted;
      if (deleted < batchSize) return total;
    }
  }
}
