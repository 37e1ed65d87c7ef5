import { Injectable } from '@nestjs/common';
import { In, QueryFailedError, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import { ONGOING_WORKFLOW_STATES } from '../../common/states';
import { isUuid } from '../../common/uuid';
import type { WorkflowDefinition } from '../../discovery/workflow-definition.interface';
import type { SignalEntity } from '../../entities/signal.entity';
import { SignalEntity as SignalRow } from '../../entities/signal.entity';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import { WorkflowEntity } from '../../entities/workflow.entity';
import type { WorkflowState } from '../../interfaces/states.interface';
import {
  WorkflowRepository,
  type ExecutionChanges,
  type NewBulkWorkflow,
  type NewExecution,
  type NewSignal,
  type NewWorkflow,
  type HeroIdentity,
  type PageRequest,
  type ScheduledExecutionsPage,
  type StuckKind,
  type StuckPageStart,
  type WorkflowListQuery,
  type WorkflowSearchPage,
  type WorkflowSearchQuery,
  type RepositoryTransaction,
  type SchemaFeatures,
  type SignalChanges,
  type AtOnceSignalDelivery,
  type AtOnceSignalOutcome,
  type DatabaseRoute,
  type SignalDeliveryRows,
  type StepReadAhead,
  type StepRowsAsLeft,
  type GuessedStepRows,
  type TransactionOptions,
  type WorkflowChanges,
} from '../../ports/workflow.repository';
import { CursorCheckpointWriter } from './cursor-checkpoint.writer';
import { GenevaDriveDataSource } from './geneva-drive-data-source';
import type { UnitOfWork } from './unit-of-work';
import { WorkflowRows } from './workflow-rows';
import { identifyHero } from './hero-arguments';
import { ExecutionColumns } from './execution-columns';
import { readPostgresRoute } from './postgres-route.reader';
import { HousekeepingLock } from './housekeeping.lock';
import { HousekeepingQueries } from './housekeeping-queries';
import { HeroResolver } from './hero-resolver';
import { isUniqueViolation } from './sql-dialect';
import { SignalRows } from './signal-rows';

/**
 * The repository on a TypeORM DataSource: PostgreSQL, MariaDB/MySQL and SQLite. Library-owned
 * transactions are UnitOfWorks of GenevaDriveDataSource; on PostgreSQL the runner's transactions
 * carry a PostgresQueryBatch, which the row stores use for the hot path (bound statements in as
 * few round trips as possible), everything else goes through TypeORM's public API.
 */
@Injectable()
export class TypeOrmWorkflowRepository extends WorkflowRepository {
  constructor(
    private readonly database: GenevaDriveDataSource,
    private readonly rows: WorkflowRows,
    private readonly signalRows: SignalRows,
    private readonly checkpoints: CursorCheckpointWriter,
    private readonly heroes: HeroResolver,
    private readonly housekeeping: HousekeepingQueries,
    private readonly housekeepingLock: HousekeepingLock,
    private readonly columns: ExecutionColumns,
  ) {
    super();
  }

  get features(): SchemaFeatures {
    return this.database.features;
  }

  refreshSchemaFeatures(): Promise<SchemaFeatures> {
    return this.database.refreshSchemaFeatures();
  }

  transaction<T>(
    work: (tx: RepositoryTransaction) => Promise<T>,
    options: TransactionOptions = {},
  ): Promise<T> {
    return this.database.transaction(work, options.caller as EntityManager | undefined, {
      hotPath: options.hotPath,
      enqueueInBackground: options.enqueueInBackground,
    });
  }

  isDatabaseError(error: unknown): boolean {
    return error instanceof QueryFailedError;
  }

  isUniqueViolation(error: unknown): boolean {
    return isUniqueViolation(error);
  }

  lockWorkflow(tx: RepositoryTransaction, id: string): Promise<WorkflowEntity | null> {
    return this.rows.lockWorkflow(uow(tx), id);
  }

  lockForStep(
    tx: RepositoryTransaction,
    workflowId: string,
    executionId: string,
    readAhead: StepReadAhead = {},
  ) {
    const unit = uow(tx);
    if (!unit.batch) return this.rows.lockRows(unit, workflowId, executionId);
    const { hero, signalId } = readAhead;
    const reader = hero ? this.heroes.readerFor(hero.heroType) : null;
    return this.rows.lockRows(unit, workflowId, executionId, {
      hero: reader && hero ? { reader, ...hero } : null,
      signalId: signalId ?? null,
    });
  }

  override lockForStepAsLeft(
    tx: RepositoryTransaction,
    left: StepRowsAsLeft,
    readAhead: StepReadAhead,
  ): GuessedStepRows | null {
    const unit = uow(tx);
    if (!unit.batch) return null;
    const { hero } = readAhead;
    const reader = hero ? this.heroes.readerFor(hero.heroType) : null;
    // A hero only getOne() can load is not read in the locks' message.
    if (hero && !reader) return null;
    return this.rows.lockRowsAsLeft(unit, left, reader && hero ? { reader, ...hero } : null);
  }

  findWorkflow(id: string): Promise<WorkflowEntity | null> {
    return this.database.manager.findOne(WorkflowEntity, { where: { id } });
  }

  findOngoing(type: string, hero: HeroIdentity): Promise<WorkflowEntity | null> {
    return this.database.manager.findOne(WorkflowEntity, {
      where: { type, ...hero, state: In([...ONGOING_WORKFLOW_STATES]) },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
  }

  listWorkflows(filter: WorkflowListQuery): Promise<WorkflowEntity[]> {
    const query = this.database.manager
      .createQueryBuilder(WorkflowEntity, 'workflow')
      .orderBy('workflow.createdAt', 'DESC')
      .addOrderBy('workflow.id', 'DESC');
    if (filter.type !== undefined) query.andWhere('workflow.type = :type', { type: filter.type });
    if (filter.states !== undefined) {
      query.andWhere('workflow.state IN (:...states)', { states: filter.states });
    }
    if (filter.ongoing === true) {
      query.andWhere('workflow.state IN (:...ongoing)', { ongoing: ONGOING_WORKFLOW_STATES });
    } else if (filter.ongoing === false) {
      query.andWhere('workflow.state NOT IN (:...ongoing)', { ongoing: ONGOING_WORKFLOW_STATES });
    }
    if (filter.hero !== undefined) {
      query.andWhere('workflow.heroType = :heroType AND workflow.heroId = :heroId', filter.hero);
    }
    if (filter.limit !== undefined) query.take(filter.limit);
    if (filter.offset !== undefined) query.skip(filter.offset);
    return query.getMany();
  }

  searchWorkflows(
    filter: WorkflowSearchQuery,
    page: WorkflowSearchPage,
  ): Promise<WorkflowEntity[]> {
    return this.searchPageQuery(filter, page).getMany();
  }

  /** One keyset page of the search, newest first (public for the EXPLAIN test of its index). */
  searchPageQuery(
    filter: WorkflowSearchQuery,
    page: WorkflowSearchPage,
  ): SelectQueryBuilder<WorkflowEntity> {
    const query = this.searchQuery(filter)
      .orderBy('workflow.createdAt', 'DESC')
      .addOrderBy('workflow.id', 'DESC')
      .limit(page.limit);
    if (page.after !== undefined) {
      // The first condition bounds the index range; the OR alone cannot (a planner turns no
      // `a < x OR (a = x AND b < y)` into a range), and a page deep in the list would walk
      // every newer row first. The second drops the rows of the cursor's instant at or above it.
      query.andWhere(
        'workflow.createdAt <= :afterAt AND (workflow.createdAt < :afterAt OR workflow.id < :afterId)',
        { afterAt: page.after.createdAt, afterId: page.after.id },
      );
    }
    return query;
  }

  countWorkflows(filter: WorkflowSearchQuery): Promise<number> {
    return this.searchQuery(filter).getCount();
  }

  /** The search's conditions, every value a bound parameter. */
  searchQuery(filter: WorkflowSearchQuery): SelectQueryBuilder<WorkflowEntity> {
    const query = this.database.manager.createQueryBuilder(WorkflowEntity, 'workflow');
    if (filter.types !== undefined) {
      query.andWhere('workflow.type IN (:...types)', { types: filter.types });
    }
    if (filter.states !== undefined) {
      query.andWhere('workflow.state IN (:...states)', { states: filter.states });
    }
    if (filter.heroType !== undefined) {
      query.andWhere('workflow.heroType = :heroType', { heroType: filter.heroType });
    }
    if (filter.heroId !== undefined) {
      query.andWhere('workflow.heroId = :heroId', { heroId: filter.heroId });
    }
    if (filter.stepName !== undefined) {
      query.andWhere('COALESCE(workflow.currentStepName, workflow.nextStepName) = :stepName', {
        stepName: filter.stepName,
      });
    }
    if (filter.createdFrom !== undefined) {
      query.andWhere('workflow.createdAt >= :createdFrom', { createdFrom: filter.createdFrom });
    }
    if (filter.createdBefore !== undefined) {
      query.andWhere('workflow.createdAt < :createdBefore', {
        createdBefore: filter.createdBefore,
      });
    }
    if (filter.text !== undefined) {
      // PostgreSQL's `uuid` column refuses a comparison with text that is no UUID.
      query.andWhere(
        isUuid(filter.text)
          ? '(workflow.id = :textId OR workflow.heroId = :text)'
          : 'workflow.heroId = :text',
        { text: filter.text, textId: filter.text.toLowerCase() },
      );
    }
    if (filter.waitingSinceBefore !== undefined) {
      const waiting = query
        .subQuery()
        .select('1')
        .from(StepExecutionEntity, 'parked')
        .where('parked.workflowId = workflow.id')
        .andWhere('parked.state = :parkedState')
        .andWhere('parked.waitingSince < :waitingSinceBefore')
        .getQuery();
      query.andWhere(`EXISTS ${waiting}`, {
        parkedState: 'waiting',
        waitingSinceBefore: filter.waitingSinceBefore,
      });
    }
    return query;
  }

  async countOngoingAtSteps(
    type: string,
    stepNames: readonly string[],
  ): Promise<Record<string, number>> {
    if (stepNames.length === 0) return {};
    const rows = await this.database.manager
      .createQueryBuilder(StepExecutionEntity, 'execution')
      .innerJoin(WorkflowEntity, 'workflow', 'workflow.id = execution.workflowId')
      .select('execution.stepName', 'stepName')
      .addSelect('COUNT(*)', 'count')
      .where('workflow.type = :type', { type })
      .andWhere('workflow.state IN (:...ongoing)', { ongoing: ONGOING_WORKFLOW_STATES })
      .andWhere('execution.stepName IN (:...stepNames)', { stepNames })
      .groupBy('execution.stepName')
      .getRawMany<{ stepName: string; count: string | number }>();
    return Object.fromEntries(rows.map((row) => [row.stepName, Number(row.count)]));
  }

  findExecution(id: string): Promise<StepExecutionEntity | null> {
    return this.rows.findExecution(this.database.manager, id);
  }

  async currentExecution(
    tx: RepositoryTransaction | null,
    workflowId: string,
  ): Promise<StepExecutionEntity | null> {
    if (!tx) return this.rows.currentExecution(this.database.manager, workflowId);
    return this.rows.currentExecution(await uow(tx).manager(), workflowId, tx.locks);
  }

  async executionsOfStep(
    tx: RepositoryTransaction,
    workflowId: string,
    stepName: string,
    page?: PageRequest,
  ): Promise<StepExecutionEntity[]> {
    return this.rows.executionsOfStep(await uow(tx).manager(), workflowId, stepName, page);
  }

  async successorOf(
    tx: RepositoryTransaction | null,
    executionId: string,
  ): Promise<StepExecutionEntity | null> {
    const manager = tx ? await uow(tx).manager() : this.database.manager;
    return manager.findOne(StepExecutionEntity, {
      select: this.columns.findSelect(),
      where: { continuesFromId: executionId },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
  }

  executionHistory(workflowId: string): Promise<StepExecutionEntity[]> {
    return this.database.manager.find(StepExecutionEntity, {
      select: this.columns.findSelect(),
      where: { workflowId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  insertWorkflow(tx: RepositoryTransaction, fields: NewWorkflow): Promise<WorkflowEntity> {
    return this.rows.insertWorkflow(uow(tx), fields);
  }

  insertExecution(
    tx: RepositoryTransaction,
    fields: NewExecution,
    id?: string,
  ): Promise<StepExecutionEntity> {
    return this.rows.insertExecution(uow(tx), fields, id);
  }

  ongoingHeroes(
    tx: RepositoryTransaction,
    type: string,
    heroes: readonly HeroIdentity[],
  ): Promise<HeroIdentity[]> {
    return this.rows.ongoingHeroes(uow(tx), type, heroes);
  }

  insertWorkflows(
    tx: RepositoryTransaction,
    rows: readonly NewBulkWorkflow[],
    onConflict: 'error' | 'skip',
  ): Promise<Array<WorkflowEntity | null>> {
    return this.rows.insertWorkflows(uow(tx), rows, onConflict);
  }

  insertExecutions(
    tx: RepositoryTransaction,
    rows: readonly NewExecution[],
  ): Promise<StepExecutionEntity[]> {
    return this.rows.insertExecutions(uow(tx), rows);
  }

  updateWorkflow(
    tx: RepositoryTransaction,
    workflow: WorkflowEntity,
    changes: WorkflowChanges,
  ): Promise<void> {
    return this.rows.updateWorkflow(uow(tx), workflow, changes);
  }

  updateExecution(
    tx: RepositoryTransaction,
    execution: StepExecutionEntity,
    changes: ExecutionChanges,
  ): Promise<void> {
    return this.rows.updateExecution(uow(tx), execution, changes);
  }

  sweepStrayExecutions(tx: RepositoryTransaction, workflowId: string): Promise<void> {
    return this.rows.sweepStrayExecutions(uow(tx), workflowId);
  }

  override lockForSignal(
    tx: RepositoryTransaction,
    workflowId: string,
    name: string,
    idempotencyKey: string | null,
  ): Promise<SignalDeliveryRows> {
    const unit = uow(tx);
    if (unit.batch)
      return this.signalRows.lockForDelivery(unit.batch, workflowId, name, idempotencyKey);
    return super.lockForSignal(tx, workflowId, name, idempotencyKey);
  }

  override deliverSignalAtOnce(
    tx: RepositoryTransaction,
    delivery: AtOnceSignalDelivery,
  ): Promise<AtOnceSignalOutcome | null> {
    const unit = uow(tx);
    if (!unit.batch) return Promise.resolve(null);
    return this.signalRows.deliverAtOnce(unit, unit.batch, delivery);
  }

  findSignalByKey(
    tx: RepositoryTransaction,
    workflowId: string,
    name: string,
    idempotencyKey: string,
  ): Promise<SignalEntity | null> {
    return this.signalRows.findByKey(uow(tx), workflowId, name, idempotencyKey);
  }

  findSignal(tx: RepositoryTransaction, id: string): Promise<SignalEntity | null> {
    return this.signalRows.findById(uow(tx), id);
  }

  attachableSignals(tx: RepositoryTransaction, workflowId: string): Promise<SignalEntity[]> {
    return this.signalRows.attachable(uow(tx), workflowId);
  }

  waitingExecutions(tx: RepositoryTransaction, workflowId: string): Promise<StepExecutionEntity[]> {
    return this.signalRows.waitingExecutions(uow(tx), workflowId);
  }

  attachedExecutions(tx: RepositoryTransaction, signalId: string): Promise<StepExecutionEntity[]> {
    return this.signalRows.attachedExecutions(uow(tx), signalId);
  }

  insertSignal(tx: RepositoryTransaction, fields: NewSignal): Promise<SignalEntity> {
    return this.signalRows.insert(uow(tx), fields);
  }

  updateSignal(
    tx: RepositoryTransaction,
    signal: SignalEntity,
    changes: SignalChanges,
  ): Promise<void> {
    return this.signalRows.update(uow(tx), signal, changes);
  }

  signalsOf(workflowId: string): Promise<SignalEntity[]> {
    return this.database.manager.find(SignalRow, {
      where: { workflowId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  identifyHero(
    hero: unknown,
    definition: WorkflowDefinition | undefined,
    method: string,
  ): HeroIdentity {
    return identifyHero(this.database.dataSource, this.heroes, hero, definition, method);
  }

  loadHero(tx: RepositoryTransaction, heroType: string, heroId: string): Promise<object | null> {
    return this.heroes.load(uow(tx), heroType, heroId);
  }

  writeCursor(execution: StepExecutionEntity, cursor: unknown): Promise<WorkflowState | null> {
    return this.checkpoints.write(execution, cursor);
  }

  workflowState(workflowId: string): Promise<WorkflowState | null> {
    return this.checkpoints.workflowState(workflowId);
  }

  tryWithHousekeepingLock<T>(work: () => Promise<T>): Promise<T | null> {
    return this.housekeepingLock.tryWithLock(work);
  }

  finishedWorkflowIds(cutoff: Date, limit: number): Promise<string[]> {
    return this.housekeeping.finishedWorkflowIds(cutoff, limit);
  }

  deleteChildren(
    kind: 'executions' | 'signals',
    workflowIds: readonly string[],
    limit: number,
  ): Promise<number> {
    return this.housekeeping.deleteChildren(kind, workflowIds, limit);
  }

  deleteFinishedWorkflows(ids: readonly string[], cutoff: Date): Promise<number> {
    return this.housekeeping.deleteFinishedWorkflows(ids, cutoff);
  }

  stuckExecutions(
    kind: StuckKind,
    cutoff: Date,
    limit: number,
    after: StuckPageStart | null,
  ): Promise<StepExecutionEntity[]> {
    return this.housekeeping.stuckExecutions(kind, cutoff, limit, after);
  }

  workflowsOf(ids: readonly string[]): Promise<Map<string, WorkflowEntity>> {
    return this.housekeeping.workflowsOf(ids);
  }

  scheduledExecutions(
    settledBefore: Date,
    limit: number,
    after: StepExecutionEntity | null,
  ): Promise<ScheduledExecutionsPage> {
    return this.housekeeping.scheduledExecutions(settledBefore, limit, after);
  }

  workflowCounts(): Promise<Array<{ type: string; state: WorkflowState; count: number }>> {
    return this.housekeeping.workflowCounts();
  }

  overdueWaits(
    now: Date,
    limit: number,
    after: StuckPageStart | null,
  ): Promise<StepExecutionEntity[]> {
    return this.housekeeping.overdueWaits(now, limit, after);
  }

  deletePendingSignals(cutoff: Date, limit: number): Promise<number> {
    return this.housekeeping.deletePendingSignals(cutoff, limit);
  }

  waitingCounts(waitingSinceBefore?: Date): Promise<Array<{ type: string; count: number }>> {
    return this.housekeeping.waitingCounts(waitingSinceBefore);
  }

  async ping(): Promise<void> {
    await this.database.manager.query('SELECT 1');
  }

  override databaseRoute(): Promise<DatabaseRoute | null> {
    const { dataSource } = this.database;
    return dataSource.options.type === 'postgres'
      ? readPostgresRoute(dataSource)
      : Promise.resolve(null);
  }
}

/** This adapter's transactions are the UnitOfWorks it created. */
function uow(tx: RepositoryTransaction): UnitOfWork {
  return tx as UnitOfWork;
}
