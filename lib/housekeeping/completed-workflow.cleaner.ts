import { Injectable } from '@nestjs/common';
import type { EntityTarget, ObjectLiteral } from 'typeorm';
import { SignalEntity } from '../entities/signal.entity';
import { StepExecutionEntity } from '../entities/step-execution.entity';
import { WorkflowEntity } from '../entities/workflow.entity';
import { GenevaDriveDataSource } from '../persistence/geneva-drive-data-source';

/** Rows deleted by one cleanup pass. */
export interface CleanupCounts {
  workflows: number;
  stepExecutions: number;
  signals: number;
}

const FINISHED_STATES = ['finished', 'canceled'];

/**
 * Deletes finished and canceled workflows whose `transitioned_at` is older than the cutoff, with
 * their step executions and signals. Children are deleted explicitly (MariaDB has no foreign
 * keys), every statement touches at most `batchSize` rows, and each runs in its own short
 * transaction. Ongoing and paused workflows are never selected, however old.
 */
@Injectable()
export class CompletedWorkflowCleaner {
  constructor(private readonly database: GenevaDriveDataSource) {}

  async clean(cutoff: Date, batchSize: number, shouldStop: () => boolean): Promise<CleanupCounts> {
    const counts: CleanupCounts = { workflows: 0, stepExecutions: 0, signals: 0 };
    while (!shouldStop()) {
      const ids = await this.database.transaction(async (uow) => {
        const rows = await (await uow.manager())
          .createQueryBuilder(WorkflowEntity, 'workflow')
          .select('workflow.id', 'id')
          .where('workflow.state IN (:...states)', { states: FINISHED_STATES })
          .andWhere('workflow.transitionedAt < :cutoff', { cutoff })
          .limit(batchSize)
          .getRawMany<{ id: string }>();
        return rows.map((row) => row.id);
      });
      if (ids.length === 0) break;
      counts.stepExecutions += await this.deleteChildren(StepExecutionEntity, ids, batchSize);
      if (this.database.features.signals) {
        counts.signals += await this.deleteChildren(SignalEntity, ids, batchSize);
      }
      const deleted = await this.database.transaction(async (uow) => {
        const result = await (await uow.manager())
          .createQueryBuilder()
          .delete()
          .from(WorkflowEntity)
          .where('id IN (:...ids)', { ids })
          // Re-checked: a row is deleted only if it is still finished or canceled before the cutoff.
          .andWhere('state IN (:...states)', { states: FINISHED_STATES })
          .andWhere('transitioned_at < :cutoff', { cutoff })
          .execute();
        return result.affected ?? 0;
      });
      counts.workflows += deleted;
      if (ids.length < batchSize || deleted === 0) break;
    }
    return counts;
  }

  /** Deletes the rows of `entity` belonging to the workflows, `batchSize` rows per statement. */
  private async deleteChildren(
    entity: EntityTarget<ObjectLiteral>,
    workflowIds: string[],
    batchSize: number,
  ): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.database.transaction(async (uow) => {
        const rows = await (await uow.manager())
          .createQueryBuilder(entity, 'row')
          .select('row.id', 'id')
          .where('row.workflowId IN (:...workflowIds)', { workflowIds })
          .limit(batchSize)
          .getRawMany<{ id: string }>();
        if (rows.length === 0) return 0;
        const result = await (await uow.manager())
          .createQueryBuilder()
          .delete()
          .from(entity)
          .where('id IN (:...ids)', { ids: rows.map((row) => row.id) })
          .execute();
        return result.affected ?? rows.length;
      });
      total += deleted;
      if (deleted < batchSize) return total;
    }
  }
}
