import { Injectable } from '@nestjs/common';
import {
  In,
  type EntityManager,
  type EntityTarget,
  type ObjectLiteral,
  type SelectQueryBuilder,
} from 'typeorm';
import { SignalEntity } from '../../entities/signal.entity';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import { WorkflowEntity } from '../../entities/workflow.entity';
import type { WorkflowState } from '../../interfaces/states.interface';
import type {
  ScheduledExecutionsPage,
  StuckKind,
  StuckPageStart,
} from '../../ports/workflow.repository';
import { GenevaDriveDataSource } from './geneva-drive-data-source';

const FINISHED_STATES = ['finished', 'canceled'];
/** Workflows whose scheduled executions are expected to run (as literals: see below). */
const RUNNABLE_STATES_SQL = "('ready', 'performing')";
/** The column each kind of stuck execution is selected and ordered by (served by an index). */
const FILTER_COLUMN = { in_progress: 'startedAt', scheduled: 'scheduledFor' } as const;
/** The state as a literal, not a parameter, so the planner can match the partial index's predicate. */
const STUCK_STATE_PREDICATES = {
  in_progress: "execution.state = 'in_progress'",
  scheduled: "execution.state = 'scheduled'",
} as const;

/**
 * Housekeeping's reads and deletes on TypeORM: each in a short transaction of its own, each
 * touching at most one batch of rows, each served by an index (test/e2e/housekeeping-explain).
 */
@Injectable()
export class HousekeepingQueries {
  constructor(private readonly database: GenevaDriveDataSource) {}

  finishedWorkflowIds(cutoff: Date, limit: number): Promise<string[]> {
    return this.database.transaction(async (uow) => {
      const rows = await (
        await uow.manager()
      )
        .createQueryBuilder(WorkflowEntity, 'workflow')
        .select('workflow.id', 'id')
        .where('workflow.state IN (:...states)', { states: FINISHED_STATES })
        .andWhere('workflow.transitionedAt < :cutoff', { cutoff })
        .limit(limit)
        .getRawMany<{ id: string }>();
      return rows.map((row) => row.id);
    });
  }

  deleteChildren(
    kind: 'executions' | 'signals',
    workflowIds: readonly string[],
    limit: number,
  ): Promise<number> {
    const entity: EntityTarget<ObjectLiteral> =
      kind === 'executions' ? StepExecutionEntity : SignalEntity;
    return this.database.transaction(async (uow) => {
      const manager = await uow.manager();
      const rows = await manager
        .createQueryBuilder(entity, 'row')
        .select('row.id', 'id')
        .where('row.workflowId IN (:...workflowIds)', { workflowIds })
        .limit(limit)
        .getRawMany<{ id: string }>();
      if (rows.length === 0) return 0;
      const result = await manager
        .createQueryBuilder()
        .delete()
        .from(entity)
        .where('id IN (:...ids)', { ids: rows.map((row) => row.id) })
        .execute();
      return result.affected ?? rows.length;
    });
  }

  deleteFinishedWorkflows(ids: readonly string[], cutoff: Date): Promise<number> {
    return this.database.transaction(async (uow) => {
      const result = await (
        await uow.manager()
      )
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
  }

  stuckExecutions(
    kind: StuckKind,
    cutoff: Date,
    limit: number,
    after: StuckPageStart | null,
  ): Promise<StepExecutionEntity[]> {
    return this.database.transaction(async (uow) =>
      this.stuckQuery(await uow.manager(), kind, cutoff, limit, after).getMany(),
    );
  }

  /**
   * The stuck-execution page query, ordered by the filter column so PostgreSQL walks the partial
   * index on `started_at WHERE state = 'in_progress'` or the `(state, scheduled_for)` index.
   */
  stuckQuery(
    manager: EntityManager,
    kind: StuckKind,
    cutoff: Date,
    limit: number,
    after: StuckPageStart | null = null,
  ): SelectQueryBuilder<StepExecutionEntity> {
    const column = `execution.${FILTER_COLUMN[kind]}`;
    const query = manager
      .createQueryBuilder(StepExecutionEntity, 'execution')
      .select([
        'execution.id',
        'execution.workflowId',
        'execution.stepName',
        'execution.jobId',
        'execution.updatedAt',
        column,
      ])
      .where(STUCK_STATE_PREDICATES[kind])
      .andWhere(`${column} < :cutoff`, { cutoff });
    if (kind === 'scheduled') {
      query.innerJoin(
        WorkflowEntity,
        'workflow',
        `workflow.id = execution.workflowId AND workflow.state IN ${RUNNABLE_STATES_SQL}`,
      );
    }
    if (after) {
      query.andWhere(
        `${column} >= :afterAt AND (${column} > :afterAt OR execution.id > :afterId)`,
        { afterAt: after.at, afterId: after.id },
      );
    }
    return query.orderBy(column, 'ASC').addOrderBy('execution.id', 'ASC').limit(limit);
  }

  scheduledExecutions(
    settledBefore: Date,
    limit: number,
    after: StepExecutionEntity | null,
  ): Promise<ScheduledExecutionsPage> {
    return this.database.transaction(async (uow) => {
      const manager = await uow.manager();
      const query = manager
        .createQueryBuilder(StepExecutionEntity, 'execution')
        .select([
          'execution.id',
          'execution.workflowId',
          'execution.stepName',
          'execution.jobId',
          'execution.scheduledFor',
        ])
        .innerJoin(
          WorkflowEntity,
          'workflow',
          `workflow.id = execution.workflowId AND workflow.state IN ${RUNNABLE_STATES_SQL}`,
        )
        .where("execution.state = 'scheduled'")
        .andWhere('execution.updatedAt < :settledBefore', { settledBefore });
      if (after) {
        query.andWhere(
          // The leading `>=` bounds the index range (as the other keyset pages here do).
          'execution.scheduledFor >= :afterAt AND (execution.scheduledFor > :afterAt OR execution.id > :afterId)',
          { afterAt: after.scheduledFor, afterId: after.id },
        );
      }
      const executions = await query
        .orderBy('execution.scheduledFor', 'ASC')
        .addOrderBy('execution.id', 'ASC')
        .limit(limit)
        .getMany();
      const ids = executions.map((execution) => execution.workflowId);
      return { executions, workflows: await workflowsOf(manager, ids) };
    });
  }

  overdueWaits(
    now: Date,
    limit: number,
    after: StuckPageStart | null,
  ): Promise<StepExecutionEntity[]> {
    return this.database.transaction(async (uow) =>
      this.overdueWaitsQuery(await uow.manager(), now, limit, after).getMany(),
    );
  }

  /**
   * Parked executions of ready workflows past their deadline, in deadline order: PostgreSQL walks
   * the partial index on `wait_deadline_at WHERE state = 'waiting'`.
   */
  overdueWaitsQuery(
    manager: EntityManager,
    now: Date,
    limit: number,
    after: StuckPageStart | null = null,
  ): SelectQueryBuilder<StepExecutionEntity> {
    const query = manager
      .createQueryBuilder(StepExecutionEntity, 'execution')
      .select(['execution.id', 'execution.workflowId', 'execution.waitDeadlineAt'])
      .innerJoin(
        WorkflowEntity,
        'workflow',
        "workflow.id = execution.workflowId AND workflow.state = 'ready'",
      )
      .where("execution.state = 'waiting'")
      .andWhere('execution.waitDeadlineAt <= :now', { now });
    if (after) {
      query.andWhere(
        'execution.waitDeadlineAt >= :afterAt AND (execution.waitDeadlineAt > :afterAt OR execution.id > :afterId)',
        { afterAt: after.at, afterId: after.id },
      );
    }
    return query
      .orderBy('execution.waitDeadlineAt', 'ASC')
      .addOrderBy('execution.id', 'ASC')
      .limit(limit);
  }

  deletePendingSignals(cutoff: Date, limit: number): Promise<number> {
    return this.database.transaction(async (uow) => {
      const manager = await uow.manager();
      const rows = await this.pendingSignalsQuery(manager, cutoff, limit).getRawMany<{
        id: string;
      }>();
      if (rows.length === 0) return 0;
      const result = await manager
        .createQueryBuilder()
        .delete()
        .from(SignalEntity)
        .where('id IN (:...ids)', { ids: rows.map((row) => row.id) })
        // Re-checked: a signal claimed since the read above stays.
        .andWhere("state = 'pending'")
        .execute();
      return result.affected ?? 0;
    });
  }

  /** The oldest pending signals before `cutoff`: the partial index on `created_at WHERE state = 'pending'`. */
  pendingSignalsQuery(
    manager: EntityManager,
    cutoff: Date,
    limit: number,
  ): SelectQueryBuilder<SignalEntity> {
    return manager
      .createQueryBuilder(SignalEntity, 'signal')
      .select('signal.id', 'id')
      .where("signal.state = 'pending'")
      .andWhere('signal.createdAt < :cutoff', { cutoff })
      .orderBy('signal.createdAt', 'ASC')
      .limit(limit);
  }

  workflowsOf(ids: readonly string[]): Promise<Map<string, WorkflowEntity>> {
    return workflowsOf(this.database.manager, ids);
  }

  async workflowCounts(): Promise<Array<{ type: string; state: WorkflowState; count: number }>> {
    const rows = await this.database.manager
      .createQueryBuilder(WorkflowEntity, 'workflow')
      .select('workflow.type', 'type')
      .addSelect('workflow.state', 'state')
      .addSelect('COUNT(*)', 'count')
      .groupBy('workflow.type')
      .addGroupBy('workflow.state')
      .getRawMany<{ type: string; state: WorkflowState; count: string | number }>();
    // PostgreSQL returns COUNT(*) as a string.
    return rows.map((row) => ({ ...row, count: Number(row.count) }));
  }

  async waitingCounts(waitingSinceBefore?: Date): Promise<Array<{ type: string; count: number }>> {
    const query = this.database.manager
      .createQueryBuilder(StepExecutionEntity, 'execution')
      .innerJoin(WorkflowEntity, 'workflow', 'workflow.id = execution.workflowId')
      .select('workflow.type', 'type')
      .addSelect('COUNT(*)', 'count')
      .where("execution.state = 'waiting'")
      .groupBy('workflow.type');
    if (waitingSinceBefore)
      query.andWhere('execution.waitingSince < :cutoff', { cutoff: waitingSinceBefore });
    const rows = await query.getRawMany<{ type: string; count: string | number }>();
    return rows.map((row) => ({ type: row.type, count: Number(row.count) }));
  }
}

/** The workflows of these ids (id, type, state, metadata: what job options are merged from). */
async function workflowsOf(
  manager: EntityManager,
  ids: readonly string[],
): Promise<Map<string, WorkflowEntity>> {
  const distinct = [...new Set(ids)];
  const rows =
    distinct.length === 0
      ? []
      : await manager.find(WorkflowEntity, {
          where: { id: In(distinct) },
          select: { id: true, type: true, state: true, metadata: true },
        });
  return new Map(rows.map((row) => [row.id, row]));
}
