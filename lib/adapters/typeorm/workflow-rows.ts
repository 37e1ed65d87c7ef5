import { Injectable } from '@nestjs/common';
import { In, type EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import { WorkflowEntity } from '../../entities/workflow.entity';
import { ACTIVE_EXECUTION_STATES } from '../../common/states';
import { ExecutionColumns } from './execution-columns';
import type { UnitOfWork } from './unit-of-work';
import { newExecutionRow, newWorkflowRow } from '../../entities/new-rows';
import type { PartialRow } from './partial-row';

type WorkflowChanges = Partial<Omit<WorkflowEntity, 'id' | 'createdAt' | 'updatedAt'>>;
type ExecutionChanges = Partial<
  Omit<StepExecutionEntity, 'id' | 'workflowId' | 'createdAt' | 'updatedAt'>
>;

/**
 * Row-level reads and writes of workflows and step executions. Locking reads take `FOR UPDATE`
 * where the database has it; every write sets `updated_at` from the application clock.
 */
@Injectable()
export class WorkflowRows {
  /** Workflow changes held back until the commit of a coalescing unit of work. */
  private readonly pendingWorkflowWrites = new WeakMap<UnitOfWork, Map<string, WorkflowChanges>>();

  constructor(private readonly columns: ExecutionColumns) {}

  /** Locks and reads the workflow row (always locked before any execution row). */
  async lockWorkflow(uow: UnitOfWork, id: string): Promise<WorkflowEntity | null> {
    const query = (await uow.manager())
      .createQueryBuilder(WorkflowEntity, 'workflow')
      .where('workflow.id = :id', { id });
    if (uow.locks) query.setLock('pessimistic_write');
    return query.getOne();
  }

  async lockExecution(uow: UnitOfWork, id: string): Promise<StepExecutionEntity | null> {
    const query = this.columns
      .selectOn(
        (await uow.manager()).createQueryBuilder(StepExecutionEntity, 'execution'),
        'execution',
      )
      .where('execution.id = :id', { id });
    if (uow.locks) query.setLock('pessimistic_write');
    return query.getOne();
  }

  /**
   * `lockWorkflow` then `lockExecution`. On PostgreSQL's batched hot path both travel in one round
   * trip with the transaction's opening and its held-back writes; the execution is still read
   * after the workflow lock is held (statements run in order).
   */
  async lockRows(
    uow: UnitOfWork,
    workflowId: string,
    executionId: string,
  ): Promise<{ workflow: WorkflowEntity | null; execution: StepExecutionEntity | null }> {
    if (!uow.batch) {
      const workflow = await this.lockWorkflow(uow, workflowId);
      return { workflow, execution: await this.lockExecution(uow, executionId) };
    }
    const { workflows, executions } = uow.batch.tables;
    const [workflowRead, executionRead] = await uow.batch.readTogether([
      workflows.selectById(workflowId, true),
      executions.selectById(executionId, true),
    ]);
    const workflowRow = workflowRead.rows[0];
    const executionRow = executionRead.rows[0];
    return {
      workflow: workflowRow ? workflows.hydrate(workflowRow) : null,
      execution: executionRow ? executions.hydrate(executionRow) : null,
    };
  }

  findExecution(manager: EntityManager, id: string): Promise<StepExecutionEntity | null> {
    return manager.findOne(StepExecutionEntity, {
      where: { id },
      select: this.columns.findSelect(),
    });
  }

  /** The execution in scheduled, waiting or in_progress, if any (locked inside a unit of work). */
  currentExecution(
    manager: EntityManager,
    workflowId: string,
    lock = false,
  ): Promise<StepExecutionEntity | null> {
    const query = this.columns
      .selectOn(manager.createQueryBuilder(StepExecutionEntity, 'execution'), 'execution')
      .where('execution.workflowId = :workflowId', { workflowId })
      .andWhere('execution.state IN (:...states)', { states: ACTIVE_EXECUTION_STATES })
      .orderBy('execution.createdAt', 'DESC')
      .addOrderBy('execution.id', 'DESC');
    if (lock) query.setLock('pessimistic_write');
    return query.getOne();
  }

  /** Executions of one step, newest first (a page of them with `page`). */
  executionsOfStep(
    manager: EntityManager,
    workflowId: string,
    stepName: string,
    page?: { offset: number; limit: number },
  ): Promise<StepExecutionEntity[]> {
    return manager.find(StepExecutionEntity, {
      select: this.columns.findSelect(),
      where: { workflowId, stepName },
      order: { createdAt: 'DESC', id: 'DESC' },
      ...(page ? { skip: page.offset, take: page.limit } : {}),
    });
  }

  async insertWorkflow(
    uow: UnitOfWork,
    fields: Pick<WorkflowEntity, 'type' | 'heroType' | 'heroId' | 'allowMultiple' | 'metadata'>,
  ): Promise<WorkflowEntity> {
    const now = new Date();
    const workflow = newWorkflowRow(uuidv7(), fields, now);
    await (
      await uow.manager()
    ).insert(WorkflowEntity, workflow as PartialRow<WorkflowEntity>);
    return workflow;
  }

  async insertExecution(
    uow: UnitOfWork,
    fields: Pick<StepExecutionEntity, 'workflowId' | 'stepName' | 'scheduledFor'> &
      ExecutionChanges,
    id: string = uuidv7(),
  ): Promise<StepExecutionEntity> {
    const now = new Date();
    const execution = newExecutionRow(id, fields, now);
    if (uow.batch) uow.batch.insert(uow.batch.tables.executions, execution);
    else
      await (
        await uow.manager()
      )
        .createQueryBuilder()
        .insert()
        .into(StepExecutionEntity, this.columns.properties())
        .values(this.columns.writable(execution) as PartialRow<StepExecutionEntity>)
        .updateEntity(false)
        .execute();
    return execution;
  }

  /**
   * Changes the workflow row and the entity. In a unit of work that coalesces workflow writes,
   * the row is written once before the commit, with every change made meanwhile.
   */
  async updateWorkflow(
    uow: UnitOfWork,
    workflow: WorkflowEntity,
    changes: WorkflowChanges,
  ): Promise<void> {
    const updatedAt = new Date();
    Object.assign(workflow, changes, { updatedAt });
    if (!uow.coalescesWorkflowWrites) {
      await (
        await uow.manager()
      ).update(WorkflowEntity, { id: workflow.id }, {
        ...changes,
        updatedAt,
      } as PartialRow<WorkflowEntity>);
      return;
    }
    let pendingByWorkflow = this.pendingWorkflowWrites.get(uow);
    if (!pendingByWorkflow)
      this.pendingWorkflowWrites.set(uow, (pendingByWorkflow = new Map<string, WorkflowChanges>()));
    const pending = pendingByWorkflow.get(workflow.id) ?? {};
    pendingByWorkflow.set(workflow.id, Object.assign(pending, changes, { updatedAt }));
    uow.beforeCommit(`workflow:${workflow.id}`, async () => {
      pendingByWorkflow.delete(workflow.id);
      if (uow.batch) uow.batch.update(uow.batch.tables.workflows, { id: workflow.id }, pending);
      else
        await (
          await uow.manager()
        ).update(
          WorkflowEntity,
          { id: workflow.id },
          pending as PartialRow<WorkflowEntity>,
        );
    });
  }

  async updateExecution(
    uow: UnitOfWork,
    execution: StepExecutionEntity,
    changes: ExecutionChanges,
  ): Promise<void> {
    const updatedAt = new Date();
    if (uow.batch)
      uow.batch.update(
        uow.batch.tables.executions,
        { id: execution.id },
        { ...changes, updatedAt },
      );
    else {
      await (
        await uow.manager()
      ).update(
        StepExecutionEntity,
        { id: execution.id },
        this.columns.writable({
          ...changes,
          updatedAt,
        }) as PartialRow<StepExecutionEntity>,
      );
    }
    Object.assign(execution, changes, { updatedAt });
  }

  /**
   * Cancels every scheduled or waiting execution of the workflow (the stray sweep before a new
   * execution is created). In-progress rows are left alone.
   */
  async sweepStrayExecutions(uow: UnitOfWork, workflowId: string): Promise<void> {
    const now = new Date();
    const changes = {
      state: 'canceled',
      outcome: 'canceled',
      canceledAt: now,
      finishedAt: now,
      updatedAt: now,
    } as const;
    if (uow.batch)
      uow.batch.update(
        uow.batch.tables.executions,
        { workflowId, state: ['scheduled', 'waiting'] },
        changes,
      );
    else
      await (
        await uow.manager()
      ).update(StepExecutionEntity, { workflowId, state: In(['scheduled', 'waiting']) }, changes);
  }
}
