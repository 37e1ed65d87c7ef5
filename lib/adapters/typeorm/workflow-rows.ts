import { Injectable } from '@nestjs/common';
import { In, type EntityManager } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import { WorkflowEntity } from '../../entities/workflow.entity';
import { ACTIVE_EXECUTION_STATES, ONGOING_WORKFLOW_STATES } from '../../common/states';
import type {
  GuessedStepRows,
  HeroIdentity,
  NewBulkWorkflow,
  NewWorkflow,
  StepRowsAsLeft,
} from '../../ports/workflow.repository';
import { ExecutionColumns } from './execution-columns';
import { GenevaDriveDataSource } from './geneva-drive-data-source';
import type { HeroReadAhead } from './hero-row-reader';

/** What the batched lock reads after the locks (see `lockRows`). */
export interface LockReadAhead {
  hero: HeroReadAhead | null;
  signalId: string | null;
}
import type { UnitOfWork } from './unit-of-work';
import { newExecutionRow, newWorkflowRow } from '../../entities/new-rows';
import type { PartialRow } from './partial-row';
import { isUniqueViolation } from './sql-dialect';
import { stateLiterals } from '../postgres/library-table';

type WorkflowChanges = Partial<Omit<WorkflowEntity, 'id' | 'createdAt' | 'updatedAt'>>;
type ExecutionChanges = Partial<
  Omit<StepExecutionEntity, 'id' | 'workflowId' | 'createdAt' | 'updatedAt'>
>;

/**
 * Rows per multi-row INSERT of a bulk start through TypeORM (MariaDB/MySQL, SQLite): bound
 * parameters stay far below every driver's limit (SQLite's 32,766, MySQL's 65,535), and TypeORM's
 * query builder, whose cost per parameter grows with the parameters already set, stays quick (a
 * few thousand parameters at most). PostgreSQL takes a whole call's rows in one statement with one
 * parameter (`LibraryTable.insertMany`).
 */
const WORKFLOWS_PER_INSERT = 250;
const EXECUTIONS_PER_INSERT = 125;
const HERO_IDS_PER_READ = 1_000;

/**
 * The properties some row sets to a value: a multi-row INSERT leaves the others out, so they take
 * their NULL default, and TypeORM's builder handles fewer parameters.
 */
function setProperties(rows: readonly object[], properties: readonly string[]): string[] {
  return properties.filter((property) =>
    rows.some((row) => {
      const value = (row as Record<string, unknown>)[property];
      return value !== null && value !== undefined;
    }),
  );
}

function workflowProperties(manager: EntityManager): string[] {
  return manager.connection
    .getMetadata(WorkflowEntity)
    .columns.map((column) => column.propertyName);
}

function compareHeroes(a: WorkflowEntity, b: WorkflowEntity): number {
  const left = `${a.heroType ?? ''}\u001f${a.heroId ?? ''}`;
  const right = `${b.heroType ?? ''}\u001f${b.heroId ?? ''}`;
  return left < right ? -1 : left > right ? 1 : 0;
}

function heroKey(hero: HeroIdentity): string {
  return `${hero.heroType}\u001f${hero.heroId}`;
}

/**
 * Row-level reads and writes of workflows and step executions. Locking reads take `FOR UPDATE`
 * where the database has it; every write sets `updated_at` from the application clock.
 */
@Injectable()
export class WorkflowRows {
  /** Workflow changes held back until the commit of a coalescing unit of work. */
  private readonly pendingWorkflowWrites = new WeakMap<UnitOfWork, Map<string, WorkflowChanges>>();

  constructor(
    private readonly columns: ExecutionColumns,
    private readonly database: GenevaDriveDataSource,
  ) {}

  /**
   * Locks and reads the workflow row (always locked before any execution row), with the
   * `context` and `trace_parent` that only a step reads, when their migration has run.
   */
  async lockWorkflow(uow: UnitOfWork, id: string): Promise<WorkflowEntity | null> {
    const query = (await uow.manager())
      .createQueryBuilder(WorkflowEntity, 'workflow')
      .where('workflow.id = :id', { id });
    if (this.database.features.workflowContext)
      query.addSelect(['workflow.context', 'workflow.traceParent']);
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
   * after the workflow lock is held (statements run in order). What `readAhead` names (the hero,
   * a signal) is read after the locks in that round trip and kept on the unit of work for the
   * `loadHero` / `findSignal` that follow.
   */
  async lockRows(
    uow: UnitOfWork,
    workflowId: string,
    executionId: string,
    readAhead: LockReadAhead = { hero: null, signalId: null },
  ): Promise<{ workflow: WorkflowEntity | null; execution: StepExecutionEntity | null }> {
    if (!uow.batch) {
      const workflow = await this.lockWorkflow(uow, workflowId);
      return { workflow, execution: await this.lockExecution(uow, executionId) };
    }
    const { workflows, executions, signals } = uow.batch.tables;
    const { hero, signalId } = readAhead;
    const [workflowRead, executionRead, ...extraReads] = await uow.batch.readTogether([
      workflows.selectById(workflowId, true),
      executions.selectById(executionId, true),
      ...(hero ? [hero.reader.statement(hero.heroId)] : []),
      ...(signalId ? [signals.selectById(signalId, false)] : []),
    ]);
    if (hero) {
      const heroRows = extraReads.shift()?.rows ?? [];
      uow.keepHeroReadAhead(hero.heroType, hero.heroId, hero.reader.hydrate(heroRows));
    }
    if (signalId) {
      const signalRow = extraReads.shift()?.rows[0];
      uow.keepSignalReadAhead(signalId, signalRow ? signals.hydrate(signalRow) : null);
    }
    const workflowRow = workflowRead.rows[0];
    const executionRow = executionRead.rows[0];
    return {
      workflow: workflowRow ? workflows.hydrate(workflowRow) : null,
      execution: executionRow ? executions.hydrate(executionRow) : null,
    };
  }

  /**
   * `lockRows` without waiting for the read, for a transaction that expects the rows exactly as
   * this process left them at its last commit (`left`): resolves copies of `left` at once, and a
   * fence goes with the transaction's first message (`PostgresQueryBatch.guess`). It locks the
   * workflow, then the execution, each only while it still has the state and `updated_at` of
   * `left` (every write of a library row sets `updated_at`, so another writer shows); once both
   * are held, it reads the hero and checks that its row and `left.signal` are still there. The hero
   * read is kept on the unit of work as `left`'s hero until the commit; `heroAfterCommit` then gives
   * the row read under the locks. Null where the transaction cannot guess (not batched, or not its
   * first statement, or the run after a broken fence).
   */
  lockRowsAsLeft(
    uow: UnitOfWork,
    left: StepRowsAsLeft,
    hero: HeroReadAhead | null,
  ): GuessedStepRows | null {
    if (!uow.batch) return null;
    const { workflows, executions, signals } = uow.batch.tables;
    const workflowSeen = workflows.existsWhere(
      { id: left.workflow.id, state: left.workflow.state, updatedAt: left.workflow.updatedAt },
      0,
      true,
    );
    const executionSeen = executions.existsWhere(
      { id: left.execution.id, state: left.execution.state, updatedAt: left.execution.updatedAt },
      workflowSeen.values.length,
      true,
    );
    const heroRead = hero ? hero.reader.statement(hero.heroId) : null;
    const signalSeen = left.signal
      ? signals.existsWhere({ id: left.signal.id }, heroRead?.values.length ?? 0)
      : null;
    const locking = {
      sql: `${workflowSeen.sql} AND ${executionSeen.sql}`,
      values: [...workflowSeen.values, ...executionSeen.values],
    };
    const afterLocks = heroRead || signalSeen ? { read: heroRead, conditions: signalSeen } : null;
    if (!uow.batch.guess(locking, afterLocks, left.execution.id)) return null;
    if (hero) uow.keepHeroReadAhead(hero.heroType, hero.heroId, left.hero);
    if (left.signal) uow.keepSignalReadAhead(left.signal.id, copyOf(left.signal));
    const batch = uow.batch;
    return {
      workflow: copyOf(left.workflow),
      execution: copyOf(left.execution),
      heroAfterCommit: () => (hero ? hero.reader.hydrate(batch.guessRead?.rows ?? []) : null),
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

  /** Names only the columns it sets: those of a migration that has not run stay unnamed. */
  async insertWorkflow(uow: UnitOfWork, fields: NewWorkflow): Promise<WorkflowEntity> {
    const now = new Date();
    const workflow = newWorkflowRow(uuidv7(), fields, now);
    if (uow.batch) {
      // Held back with the transaction's other writes: a refusal by the one-ongoing-per-hero
      // index surfaces at the COMMIT's message, and the caller maps it there.
      uow.batch.insert(uow.batch.tables.workflows, { ...workflow });
      return workflow;
    }
    const manager = await uow.manager();
    await manager
      .createQueryBuilder()
      .insert()
      .into(WorkflowEntity, setProperties([workflow], workflowProperties(manager)))
      .values({ ...workflow } as PartialRow<WorkflowEntity>)
      .updateEntity(false)
      .execute();
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
   * Inserts the workflows (`startMany()`) in multi-row INSERTs (PostgreSQL: one for the call,
   * elsewhere of at most WORKFLOWS_PER_INSERT rows), resolving them in input order. `'skip'`:
   * each INSERT runs in a savepoint; when the one-ongoing-per-hero index refuses it (a workflow
   * committed meanwhile: the index is the arbiter, the INSERT waits for a concurrent uncommitted
   * one), it is rolled back, the heroes now ongoing are read again and left out, and the rest is
   * inserted again.
   */
  async insertWorkflows(
    uow: UnitOfWork,
    fields: readonly NewBulkWorkflow[],
    onConflict: 'error' | 'skip',
  ): Promise<Array<WorkflowEntity | null>> {
    const now = new Date();
    const workflows = fields.map((row) => newWorkflowRow(uuidv7(), row, now));
    const results: Array<WorkflowEntity | null> = [...workflows];
    const manager = await uow.manager();
    const tables = this.database.libraryTables;
    const columns = setProperties(workflows, workflowProperties(manager));
    const insert = async (target: EntityManager, rows: readonly WorkflowEntity[]) => {
      if (tables) {
        const { text, values } = tables.workflows.insertMany(rows);
        await target.query(text, values);
        return;
      }
      await target
        .createQueryBuilder()
        .insert()
        .into(WorkflowEntity, columns)
        .values(rows.map((row) => ({ ...row })) as PartialRow<WorkflowEntity>[])
        .updateEntity(false)
        .execute();
    };
    const perInsert = tables ? workflows.length : WORKFLOWS_PER_INSERT;
    // Rows go in in hero order, so two bulk starts naming the same heroes wait for each other's
    // index entries in one order and never deadlock; the ids keep the input order.
    const inHeroOrder = workflows
      .map((_, position) => position)
      .sort((a, b) => compareHeroes(workflows[a], workflows[b]));
    for (let start = 0; start < inHeroOrder.length; start += perInsert) {
      const positions = inHeroOrder.slice(start, start + perInsert);
      if (onConflict === 'error') {
        await insert(
          manager,
          positions.map((position) => workflows[position]),
        );
        continue;
      }
      let remaining = positions;
      for (;;) {
        if (remaining.length === 0) break;
        const rows = remaining.map((position) => workflows[position]);
        try {
          await manager.transaction((savepoint) => insert(savepoint, rows));
          break;
        } catch (error) {
          if (!isUniqueViolation(error)) throw error;
          const ongoing = await this.ongoingHeroes(
            uow,
            rows[0].type,
            rows.filter((row) => !row.allowMultiple && row.heroId !== null) as HeroIdentity[],
          );
          if (ongoing.length === 0) throw error;
          const refused = new Set(ongoing.map(heroKey));
          remaining = remaining.filter((position) => {
            const row = workflows[position];
            if (
              row.allowMultiple ||
              row.heroId === null ||
              !refused.has(heroKey(row as HeroIdentity))
            )
              return true;
            results[position] = null;
            return false;
          });
        }
      }
    }
    return results;
  }

  /**
   * Inserts the executions: on PostgreSQL in one statement, elsewhere in multi-row INSERTs of at
   * most EXECUTIONS_PER_INSERT rows.
   */
  async insertExecutions(
    uow: UnitOfWork,
    fields: readonly (Pick<StepExecutionEntity, 'workflowId' | 'stepName' | 'scheduledFor'> &
      ExecutionChanges)[],
  ): Promise<StepExecutionEntity[]> {
    const now = new Date();
    const executions = fields.map((row) => newExecutionRow(uuidv7(), row, now));
    const manager = await uow.manager();
    const tables = this.database.libraryTables;
    if (tables) {
      const { text, values } = tables.executions.insertMany(executions);
      await manager.query(text, values);
      return executions;
    }
    const properties = setProperties(executions, this.columns.properties());
    for (let start = 0; start < executions.length; start += EXECUTIONS_PER_INSERT) {
      await manager
        .createQueryBuilder()
        .insert()
        .into(StepExecutionEntity, properties)
        .values(
          executions
            .slice(start, start + EXECUTIONS_PER_INSERT)
            .map((row) => this.columns.writable(row)) as PartialRow<StepExecutionEntity>[],
        )
        .updateEntity(false)
        .execute();
    }
    return executions;
  }

  /**
   * Of these heroes, those with an ongoing workflow of `type` under the one-ongoing-per-hero
   * index; a locking read where the unit of work asks for it (MariaDB/MySQL). On PostgreSQL one
   * statement per hero type, the ids bound as one array.
   */
  async ongoingHeroes(
    uow: UnitOfWork,
    type: string,
    heroes: readonly HeroIdentity[],
  ): Promise<HeroIdentity[]> {
    const idsByType = new Map<string, string[]>();
    for (const hero of heroes) {
      const ids = idsByType.get(hero.heroType) ?? [];
      ids.push(hero.heroId);
      idsByType.set(hero.heroType, ids);
    }
    const manager = await uow.manager();
    const found: HeroIdentity[] = [];
    const tables = this.database.libraryTables;
    if (tables) {
      // One statement per hero type whatever the number of ids: they travel as one array.
      const workflows = tables.workflows;
      const workflowsTable = workflows.quotedName;
      const [typeSql, heroTypeSql, heroIdSql, stateSql, allowMultipleSql] = [
        'type',
        'heroType',
        'heroId',
        'state',
        'allowMultiple',
      ].map((property) => workflows.columnList('w', [property]));
      const ongoingSql = stateLiterals(...ONGOING_WORKFLOW_STATES).listSql;
      const text =
        `SELECT ${heroIdSql} AS "heroId" FROM ${workflowsTable} w ` +
        `WHERE ${typeSql} = $1 AND ${heroTypeSql} = $2 AND ${heroIdSql} = ANY($3) ` +
        `AND ${stateSql} IN (${ongoingSql}) AND ${allowMultipleSql} = false`;
      for (const [heroType, ids] of idsByType) {
        const rows = await manager.query<Array<{ heroId: string }>>(text, [type, heroType, ids]);
        for (const row of rows) found.push({ heroType, heroId: row.heroId });
      }
      return found;
    }
    for (const [heroType, ids] of idsByType) {
      for (let start = 0; start < ids.length; start += HERO_IDS_PER_READ) {
        const query = manager
          .createQueryBuilder(WorkflowEntity, 'workflow')
          .select(['workflow.id', 'workflow.heroType', 'workflow.heroId'])
          .where('workflow.type = :type', { type })
          .andWhere('workflow.heroType = :heroType', { heroType })
          .andWhere('workflow.heroId IN (:...ids)', {
            ids: ids.slice(start, start + HERO_IDS_PER_READ),
          })
          .andWhere('workflow.state IN (:...states)', { states: ONGOING_WORKFLOW_STATES })
          .andWhere('workflow.allowMultiple = :allowMultiple', { allowMultiple: false });
        if (uow.lockingReads) query.setLock('pessimistic_write');
        for (const row of await query.getMany()) {
          found.push({ heroType: row.heroType!, heroId: row.heroId! });
        }
      }
    }
    return found;
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
        ).update(WorkflowEntity, { id: workflow.id }, pending as PartialRow<WorkflowEntity>);
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
        { workflowId, state: stateLiterals('scheduled', 'waiting') },
        changes,
      );
    else
      await (
        await uow.manager()
      ).update(StepExecutionEntity, { workflowId, state: In(['scheduled', 'waiting']) }, changes);
  }
}

/** A shallow copy of an entity, of its class: the guessed rows are changed apart from `left`. */
function copyOf<E extends object>(entity: E): E {
  return Object.assign(Object.create(Object.getPrototypeOf(entity) as object) as E, entity);
}
