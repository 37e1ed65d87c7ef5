import { Logger } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import {
  ACTIVE_EXECUTION_STATES,
  ONGOING_WORKFLOW_STATES,
  RUNNABLE_WORKFLOW_STATES,
} from '../../common/states';
import { describeValue } from '../../common/input-guards';
import type { WorkflowDefinition } from '../../discovery/workflow-definition.interface';
import { cursorTransformer } from '../../entities/json-column.transformer';
import { SignalEntity } from '../../entities/signal.entity';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import { WorkflowEntity } from '../../entities/workflow.entity';
import { InvalidArgumentError } from '../../errors/invalid-argument.error';
import { StepConfigurationError } from '../../errors/step-configuration.error';
import type { WorkflowState } from '../../interfaces/states.interface';
import {
  WorkflowRepository,
  type ExecutionChanges,
  type HeroIdentity,
  type NewBulkWorkflow,
  type NewExecution,
  type NewSignal,
  type NewWorkflow,
  type PageRequest,
  type RepositoryTransaction,
  type ScheduledExecutionsPage,
  type SchemaFeatures,
  type SignalChanges,
  type StuckKind,
  type StuckPageStart,
  type TransactionOptions,
  type WorkflowChanges,
  type WorkflowListQuery,
  type WorkflowSearchPage,
  type WorkflowSearchQuery,
} from '../../ports/workflow.repository';
import { isInlineEnqueue } from '../../queue/inline-enqueue.context';
import type { StepJob } from '../../queue/step-job.interface';
import { InMemoryDatabaseError } from './in-memory-database.error';
import { newExecutionRow, newSignalRow, newWorkflowRow } from '../../entities/new-rows';

/** Receives the jobs of one committed transaction, in the order they were enqueued. */
export type CommittedJobsSink = (jobs: readonly StepJob[]) => void | Promise<void>;

/** How an {@link InMemoryWorkflowRepository} behaves. */
export interface InMemoryWorkflowRepositoryOptions {
  /** Where jobs go once their transaction has committed [none: jobs are only recorded]. */
  onCommittedJobs?: CommittedJobsSink;
  /**
   * Jobs wait for the commit [true]; false hands each to the sink as soon as it is enqueued, as
   * the module option `enqueueAfterCommit: false` does. Inside `withInlineEnqueue` they are
   * handed over at once either way.
   */
  enqueueAfterCommit?: boolean;
  /** Which optional migrations count as run [both]. */
  features?: Partial<SchemaFeatures>;
  /** The application clock, for every timestamp the repository writes [`() => new Date()`]. */
  clock?: () => Date;
}

// --- rows ----------------------------------------------------------------------------------------

type TableName = 'workflows' | 'executions' | 'signals';

interface EntityOf {
  workflows: WorkflowEntity;
  executions: StepExecutionEntity;
  signals: SignalEntity;
}

/**
 * A stored row: column values by entity property name, JSON columns held as their JSON text (so a
 * row is what a database would give back, never an object the engine still holds), dates as
 * private copies. Rows are never mutated once stored: a write stores a new object.
 */
type Row = Readonly<Record<string, unknown>> & { readonly id: string };

type Tables = Record<TableName, Map<string, Row>>;

const TABLE_NAMES: readonly TableName[] = ['workflows', 'executions', 'signals'];

const ENTITY_CLASS = {
  workflows: WorkflowEntity,
  executions: StepExecutionEntity,
  signals: SignalEntity,
} as const;

const JSON_COLUMNS: Record<TableName, readonly string[]> = {
  workflows: ['metadata', 'context'],
  executions: ['metadata', 'cursor'],
  signals: ['payload'],
};

/** Properties of the entity classes that are not columns. */
const NOT_COLUMNS = new Set(['duplicateDelivery']);

/** Columns of the optional migrations (SchemaFeatures), hidden from reads and writes until run. */
const RESUMABLE_COLUMNS = new Set(['cursor', 'continuesFromId']);
const SIGNAL_COLUMNS = new Set(['signalId', 'waitingSince']);
const WAIT_TIMEOUT_COLUMNS = new Set(['waitDeadlineAt']);
const WORKFLOW_CONTEXT_COLUMNS = new Set(['context', 'traceParent']);

const FINISHED_STATES: readonly WorkflowState[] = ['finished', 'canceled'];

/** A unique index: the key a row holds in it, or null when the row is outside the index. */
interface UniqueRule {
  readonly name: string;
  readonly table: TableName;
  key(row: Row): string | null;
}

const UNIQUE_RULES: readonly UniqueRule[] = [
  {
    // (type, hero_type, hero_id) WHERE state NOT IN ('finished','canceled') AND allow_multiple = false;
    // a NULL column makes keys distinct, so heroless workflows never collide.
    name: 'geneva_drive_workflows_ongoing_hero',
    table: 'workflows',
    key: (row) =>
      ONGOING_WORKFLOW_STATES.includes(row.state as WorkflowState) &&
      row.allowMultiple !== true &&
      row.heroType !== null &&
      row.heroId !== null
        ? JSON.stringify([row.type, row.heroType, row.heroId])
        : null,
  },
  {
    // (workflow_id) WHERE state IN ('scheduled','in_progress')
    name: 'geneva_drive_step_executions_one_active',
    table: 'executions',
    key: (row) =>
      row.state === 'scheduled' || row.state === 'in_progress' ? String(row.workflowId) : null,
  },
  {
    // (workflow_id, name, idempotency_key); NULL keys never collide.
    name: 'geneva_drive_signals_dedupe',
    table: 'signals',
    key: (row) =>
      row.idempotencyKey === null || row.idempotencyKey === undefined
        ? null
        : JSON.stringify([row.workflowId, row.name, row.idempotencyKey]),
  },
];

/** What a transaction changed in one table, by row id. */
type Pending =
  | { readonly kind: 'insert'; readonly row: Row }
  | { readonly kind: 'update'; readonly changes: Readonly<Record<string, unknown>> }
  | { readonly kind: 'delete' };

type Overlay = Record<TableName, Map<string, Pending>>;

function emptyOverlay(): Overlay {
  return { workflows: new Map(), executions: new Map(), signals: new Map() };
}

function copyOverlay(overlay: Overlay): Overlay {
  return {
    workflows: new Map(overlay.workflows),
    executions: new Map(overlay.executions),
    signals: new Map(overlay.signals),
  };
}

function byCreation(a: Row, b: Row): number {
  return (time(a.createdAt) ?? 0) - (time(b.createdAt) ?? 0) || compareIds(a, b);
}

function newestFirst(a: Row, b: Row): number {
  return byCreation(b, a);
}

/** Runs a read or write that needs no waiting as a statement: a failure is a rejected promise. */
function statement<T>(run: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(run()));
}

function compareIds(a: Row, b: Row): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Finished or canceled before the cutoff (`transitioned_at < cutoff`). */
function finishedBefore(row: Row, cutoff: Date): boolean {
  const at = time(row.transitionedAt);
  return (
    FINISHED_STATES.includes(row.state as WorkflowState) && at !== null && at < cutoff.getTime()
  );
}

function time(value: unknown): number | null {
  return value instanceof Date ? value.getTime() : null;
}

function page<T>(rows: T[], offset: number | undefined, limit: number | undefined): T[] {
  const start = offset ?? 0;
  return rows.slice(start, limit === undefined ? undefined : start + limit);
}

// --- transactions --------------------------------------------------------------------------------

/**
 * One transaction of the in-memory repository. The outermost one owns the copy-on-write overlay,
 * the workflow locks and the jobs held for its commit; a savepoint (a nested transaction through
 * `caller`) works on its root's overlay and is undone by restoring a copy of it.
 */
class InMemoryTransaction implements RepositoryTransaction {
  readonly locks = true;
  overlay: Overlay = emptyOverlay();
  readonly heldLocks = new Set<string>();
  readonly deferredJobs: StepJob[] = [];
  /** Work for after the root's commit, before its jobs are handed off. */
  readonly afterCommitWork: Array<() => void> = [];
  /** The transaction this one waits for (a lock or a uniqueness check), for deadlock detection. */
  waitingFor: InMemoryTransaction | null = null;
  active = true;
  readonly settled: Promise<void>;
  private settle!: () => void;
  private readonly beforeCommitWork = new Map<string, () => Promise<void>>();

  constructor(
    readonly owner: InMemoryWorkflowRepository,
    readonly parent: InMemoryTransaction | null,
    private readonly enqueueNow: ((job: StepJob) => Promise<void>) | null,
  ) {
    this.settled = new Promise<void>((resolve) => (this.settle = resolve));
  }

  get root(): InMemoryTransaction {
    return this.parent ? this.parent.root : this;
  }

  async enqueue(job: StepJob): Promise<void> {
    this.assertActive();
    if (this.enqueueNow) await this.enqueueNow({ ...job });
    else this.root.deferredJobs.push({ ...job });
  }

  beforeCommit(key: string, work: () => Promise<void>): void {
    this.assertActive();
    if (!this.beforeCommitWork.has(key)) this.beforeCommitWork.set(key, work);
  }

  afterCommit(work: () => void): void {
    this.assertActive();
    this.root.afterCommitWork.push(work);
  }

  async runBeforeCommit(): Promise<void> {
    for (const work of this.beforeCommitWork.values()) await work();
    this.beforeCommitWork.clear();
  }

  assertActive(): void {
    if (!this.active || !this.root.active) {
      throw new InMemoryDatabaseError(
        'transaction_closed',
        'The in-memory transaction has already committed or rolled back; use the transaction passed to the current work.',
      );
    }
  }

  end(): void {
    this.active = false;
    this.settle();
  }
}

/** A workflow row lock: its holder and the transactions waiting for it, in arrival order. */
interface WorkflowLock {
  holder: InMemoryTransaction;
  waiters: Array<{ tx: InMemoryTransaction; granted: () => void }>;
}

/**
 * A `WorkflowRepository` kept in process memory, **for unit tests of the engine's state machine
 * only**: it is not a supported persistence option, is not exported from the package entry
 * points, and keeps nothing across restarts.
 *
 * It behaves as the TypeORM adapter does on PostgreSQL at READ COMMITTED, where the engine can
 * tell the difference:
 * - A transaction writes to a copy-on-write overlay of the committed rows; its reads see the
 *   committed rows plus its own changes, other code sees only committed rows. The commit applies
 *   the overlay at once (an UPDATE applies only the columns it set, on the newest committed row);
 *   a transaction that throws leaves nothing behind, jobs included.
 * - Row locks are a FIFO mutex per workflow, taken by `lockWorkflow`, `lockForStep` and a locking
 *   `currentExecution`, held until commit or rollback, re-entrant within a transaction: two
 *   transactions on the same workflow take turns. `locks` is true. A cycle of waits fails with a
 *   `deadlock_detected` error (SQLSTATE 40P01, which the engine retries).
 * - The unique indexes are enforced when a row is written: one ongoing workflow per type and hero
 *   unless `allowMultiple`; one scheduled or in_progress execution per workflow; one signal per
 *   `(workflowId, name, idempotencyKey)`. A write that collides with an uncommitted row of another
 *   transaction waits for it, as PostgreSQL does. Violations raise {@link InMemoryDatabaseError}
 *   of kind `unique_violation`. Executions and signals need their workflow (a foreign key); deleting
 *   a workflow deletes its executions and signals (the cascade).
 * - Every write sets `updatedAt` from the clock and updates the entity passed in; returned
 *   entities are fresh instances of the entity classes, so mutating one changes nothing stored.
 *   JSON columns round-trip through JSON text (cursors through the cursor transformer).
 * - Jobs enqueued in a transaction reach the sink (`onCommittedJobs`) only after the commit, or at
 *   once inside `withInlineEnqueue` or with `enqueueAfterCommit: false`. A sink that throws is
 *   logged, never raised (the commit has happened; the row stays scheduled, as in production).
 * - `caller` (a `manager` in `start()`/`signal()`) may be a transaction of this repository: the
 *   work runs in a savepoint of it and its jobs wait for the outer commit.
 * - Workflow writes of hot-path transactions are not coalesced (an optimization only).
 *
 * Heroes are whatever the test registers with {@link registerHero}. {@link identifyHero}'s
 * convention: the hero type is the name of the workflow's declared `hero` class, else of the
 * hero's own class (plain objects are refused); the hero id is its `id` property (a finite number
 * or a non-empty string), as a string.
 */
export class InMemoryWorkflowRepository extends WorkflowRepository {
  private tables: Tables = { workflows: new Map(), executions: new Map(), signals: new Map() };
  private readonly openTransactions = new Set<InMemoryTransaction>();
  private readonly workflowLocks = new Map<string, WorkflowLock>();
  private readonly heroes = new Map<string, Map<string, object>>();
  private readonly handedOff: StepJob[] = [];
  private readonly logger = new Logger('GenevaDrive');
  private sink: CommittedJobsSink | null;
  private schemaFeatures: SchemaFeatures;
  private readonly enqueueAfterCommit: boolean;
  private readonly clock: () => Date;
  private housekeepingLockHeld = false;

  constructor(options: InMemoryWorkflowRepositoryOptions = {}) {
    super();
    this.sink = options.onCommittedJobs ?? null;
    this.enqueueAfterCommit = options.enqueueAfterCommit ?? true;
    this.schemaFeatures = {
      resumable: true,
      signals: true,
      waitTimeouts: true,
      workflowContext: true,
      ...options.features,
    };
    this.clock = options.clock ?? (() => new Date());
  }

  // --- test controls -----------------------------------------------------------------------------

  /** Sets where committed jobs go (replacing any earlier sink). */
  onCommittedJobs(sink: CommittedJobsSink): void {
    this.sink = sink;
  }

  /** Every job handed to the sink so far, oldest first (copies). */
  enqueuedJobs(): StepJob[] {
    return this.handedOff.map((job) => ({ ...job }));
  }

  /** Makes a hero loadable: `loadHero(type, String(id))` returns this very object. */
  registerHero(type: string, id: string | number, hero: object): void {
    let ofType = this.heroes.get(type);
    if (!ofType) this.heroes.set(type, (ofType = new Map<string, object>()));
    ofType.set(String(id), hero);
  }

  /** Forgets a hero, as if its row had been deleted: its type stays known, `loadHero` gives null. */
  removeHero(type: string, id: string | number): void {
    this.heroes.get(type)?.delete(String(id));
  }

  /** Changes which optional migrations count as run (seen after `refreshSchemaFeatures`, too). */
  setFeatures(features: Partial<SchemaFeatures>): void {
    this.schemaFeatures = { ...this.schemaFeatures, ...features };
  }

  /** How many transactions are open right now (a test's check that nothing was left open). */
  get openTransactionCount(): number {
    return this.openTransactions.size;
  }

  // --- the port ----------------------------------------------------------------------------------

  get features(): SchemaFeatures {
    return { ...this.schemaFeatures };
  }

  refreshSchemaFeatures(): Promise<SchemaFeatures> {
    return statement(() => this.features);
  }

  async transaction<T>(
    work: (tx: RepositoryTransaction) => Promise<T>,
    options: TransactionOptions = {},
  ): Promise<T> {
    const caller = this.callerTransaction(options.caller);
    if (caller) return this.savepoint(caller, work);
    const tx = new InMemoryTransaction(this, null, this.immediateEnqueuer());
    this.openTransactions.add(tx);
    let result: T;
    try {
      result = await work(tx);
      await tx.runBeforeCommit();
      this.commit(tx);
    } catch (error) {
      this.finish(tx);
      throw error;
    }
    this.finish(tx);
    try {
      tx.afterCommitWork.forEach((work) => work());
    } finally {
      if (tx.deferredJobs.length > 0) await this.handOff(tx.deferredJobs);
    }
    return result;
  }

  isDatabaseError(error: unknown): boolean {
    return error instanceof InMemoryDatabaseError;
  }

  isUniqueViolation(error: unknown): boolean {
    return error instanceof InMemoryDatabaseError && error.kind === 'unique_violation';
  }

  // --- workflows and step executions -------------------------------------------------------------

  async lockWorkflow(tx: RepositoryTransaction, id: string): Promise<WorkflowEntity | null> {
    const own = this.own(tx);
    await this.lock(own, id);
    return this.hydrateOrNull('workflows', this.viewRow(own, 'workflows', id));
  }

  async lockForStep(
    tx: RepositoryTransaction,
    workflowId: string,
    executionId: string,
  ): Promise<{ workflow: WorkflowEntity | null; execution: StepExecutionEntity | null }> {
    const own = this.own(tx);
    await this.lock(own, workflowId);
    // Both read once the workflow lock is held; execution rows are covered by their workflow's lock.
    return {
      workflow: this.hydrateOrNull('workflows', this.viewRow(own, 'workflows', workflowId)),
      execution: this.hydrateOrNull('executions', this.viewRow(own, 'executions', executionId)),
    };
  }

  findWorkflow(id: string): Promise<WorkflowEntity | null> {
    return statement(() => this.hydrateOrNull('workflows', this.tables.workflows.get(id)));
  }

  findOngoing(type: string, hero: HeroIdentity): Promise<WorkflowEntity | null> {
    return statement(() => {
      const [found] = this.select(
        null,
        'workflows',
        (row) =>
          row.type === type &&
          row.heroType === hero.heroType &&
          row.heroId === hero.heroId &&
          ONGOING_WORKFLOW_STATES.includes(row.state as WorkflowState),
      ).sort(newestFirst);
      return this.hydrateOrNull('workflows', found);
    });
  }

  listWorkflows(query: WorkflowListQuery): Promise<WorkflowEntity[]> {
    return statement(() => {
      const rows = this.select(null, 'workflows', (row) => {
        const state = row.state as WorkflowState;
        if (query.type !== undefined && row.type !== query.type) return false;
        if (query.states !== undefined && !query.states.includes(state)) return false;
        if (query.ongoing === true && !ONGOING_WORKFLOW_STATES.includes(state)) return false;
        if (query.ongoing === false && ONGOING_WORKFLOW_STATES.includes(state)) return false;
        return (
          query.hero === undefined ||
          (row.heroType === query.hero.heroType && row.heroId === query.hero.heroId)
        );
      }).sort(newestFirst);
      return page(rows, query.offset, query.limit).map((row) => this.hydrate('workflows', row));
    });
  }

  searchWorkflows(query: WorkflowSearchQuery, at: WorkflowSearchPage): Promise<WorkflowEntity[]> {
    return statement(() => {
      const after = at.after;
      const rows = this.select(null, 'workflows', (row) => {
        if (!this.matchesSearch(row, query)) return false;
        if (after === undefined) return true;
        const created = time(row.createdAt) ?? 0;
        const start = after.createdAt.getTime();
        return created < start || (created === start && row.id < after.id);
      }).sort(newestFirst);
      return rows.slice(0, at.limit).map((row) => this.hydrate('workflows', row));
    });
  }

  countWorkflows(query: WorkflowSearchQuery): Promise<number> {
    return statement(
      () => this.select(null, 'workflows', (row) => this.matchesSearch(row, query)).length,
    );
  }

  private matchesSearch(row: Row, query: WorkflowSearchQuery): boolean {
    const created = time(row.createdAt) ?? 0;
    const step = (row.currentStepName ?? row.nextStepName) as string | null;
    if (query.types !== undefined && !query.types.includes(row.type as string)) return false;
    if (query.states !== undefined && !query.states.includes(row.state as WorkflowState)) {
      return false;
    }
    if (query.heroType !== undefined && row.heroType !== query.heroType) return false;
    if (query.heroId !== undefined && row.heroId !== query.heroId) return false;
    if (query.stepName !== undefined && step !== query.stepName) return false;
    if (query.createdFrom !== undefined && created < query.createdFrom.getTime()) return false;
    if (query.createdBefore !== undefined && created >= query.createdBefore.getTime()) {
      return false;
    }
    if (
      query.text !== undefined &&
      row.id !== query.text.toLowerCase() &&
      row.heroId !== query.text
    ) {
      return false;
    }
    const before = query.waitingSinceBefore;
    if (before === undefined) return true;
    return [...this.tables.executions.values()].some(
      (execution) =>
        execution.workflowId === row.id &&
        execution.state === 'waiting' &&
        (time(execution.waitingSince) ?? Infinity) < before.getTime(),
    );
  }

  countOngoingAtSteps(type: string, stepNames: readonly string[]): Promise<Record<string, number>> {
    return statement(() => {
      const counts: Record<string, number> = {};
      for (const row of this.tables.executions.values()) {
        const stepName = row.stepName as string;
        if (!stepNames.includes(stepName)) continue;
        const workflow = this.tables.workflows.get(row.workflowId as string);
        if (!workflow || workflow.type !== type) continue;
        if (!ONGOING_WORKFLOW_STATES.includes(workflow.state as WorkflowState)) continue;
        counts[stepName] = (counts[stepName] ?? 0) + 1;
      }
      return counts;
    });
  }

  findExecution(id: string): Promise<StepExecutionEntity | null> {
    return statement(() => this.hydrateOrNull('executions', this.tables.executions.get(id)));
  }

  async currentExecution(
    tx: RepositoryTransaction | null,
    workflowId: string,
  ): Promise<StepExecutionEntity | null> {
    const own = tx ? this.own(tx) : null;
    // FOR UPDATE on the execution rows: here, their workflow's lock.
    if (own) await this.lock(own, workflowId);
    const [current] = this.select(
      own,
      'executions',
      (row) =>
        row.workflowId === workflowId &&
        ACTIVE_EXECUTION_STATES.includes(row.state as StepExecutionEntity['state']),
    ).sort(newestFirst);
    return this.hydrateOrNull('executions', current);
  }

  executionsOfStep(
    tx: RepositoryTransaction,
    workflowId: string,
    stepName: string,
    request?: PageRequest,
  ): Promise<StepExecutionEntity[]> {
    return statement(() => {
      const rows = this.select(
        this.own(tx),
        'executions',
        (row) => row.workflowId === workflowId && row.stepName === stepName,
      ).sort(newestFirst);
      return page(rows, request?.offset, request?.limit).map((row) =>
        this.hydrate('executions', row),
      );
    });
  }

  successorOf(
    tx: RepositoryTransaction | null,
    executionId: string,
  ): Promise<StepExecutionEntity | null> {
    return statement(() => {
      this.requireColumn('resumable', 'continues_from_id');
      const [successor] = this.select(
        tx ? this.own(tx) : null,
        'executions',
        (row) => row.continuesFromId === executionId,
      ).sort(newestFirst);
      return this.hydrateOrNull('executions', successor);
    });
  }

  executionHistory(workflowId: string): Promise<StepExecutionEntity[]> {
    return statement(() =>
      this.select(null, 'executions', (row) => row.workflowId === workflowId)
        .sort(byCreation)
        .map((row) => this.hydrate('executions', row)),
    );
  }

  async insertWorkflow(tx: RepositoryTransaction, fields: NewWorkflow): Promise<WorkflowEntity> {
    const own = this.own(tx);
    const now = this.clock();
    const workflow = newWorkflowRow(uuidv7(), fields, now);
    await this.insertRow(own, 'workflows', this.encode('workflows', workflow));
    return workflow;
  }

  async insertExecution(
    tx: RepositoryTransaction,
    fields: NewExecution,
    id: string = uuidv7(),
  ): Promise<StepExecutionEntity> {
    const own = this.own(tx);
    const now = this.clock();
    const execution = newExecutionRow(id, fields, now);
    await this.insertRow(own, 'executions', this.encode('executions', execution));
    return execution;
  }

  ongoingHeroes(
    tx: RepositoryTransaction,
    type: string,
    heroes: readonly HeroIdentity[],
  ): Promise<HeroIdentity[]> {
    const own = this.own(tx);
    return statement(() => {
      const wanted = new Set(heroes.map((hero) => JSON.stringify([hero.heroType, hero.heroId])));
      return this.select(
        own,
        'workflows',
        (row) =>
          row.type === type &&
          row.allowMultiple !== true &&
          ONGOING_WORKFLOW_STATES.includes(row.state as WorkflowState) &&
          wanted.has(JSON.stringify([row.heroType, row.heroId])),
      ).map((row) => ({ heroType: row.heroType as string, heroId: row.heroId as string }));
    });
  }

  /** As the TypeORM adapter: row by row here, `'skip'` as ON CONFLICT DO NOTHING. */
  async insertWorkflows(
    tx: RepositoryTransaction,
    rows: readonly NewBulkWorkflow[],
    onConflict: 'error' | 'skip',
  ): Promise<Array<WorkflowEntity | null>> {
    const own = this.own(tx);
    const now = this.clock();
    const results: Array<WorkflowEntity | null> = [];
    for (const fields of rows) {
      const workflow = newWorkflowRow(uuidv7(), fields, now);
      const inserted = await this.insertRow(own, 'workflows', this.encode('workflows', workflow), {
        onConflictDoNothing: onConflict === 'skip',
      });
      results.push(inserted ? workflow : null);
    }
    return results;
  }

  async insertExecutions(
    tx: RepositoryTransaction,
    rows: readonly NewExecution[],
  ): Promise<StepExecutionEntity[]> {
    const own = this.own(tx);
    const now = this.clock();
    const executions: StepExecutionEntity[] = [];
    for (const fields of rows) {
      const execution = newExecutionRow(uuidv7(), fields, now);
      await this.insertRow(own, 'executions', this.encode('executions', execution));
      executions.push(execution);
    }
    return executions;
  }

  async updateWorkflow(
    tx: RepositoryTransaction,
    workflow: WorkflowEntity,
    changes: WorkflowChanges,
  ): Promise<void> {
    const own = this.own(tx);
    const updatedAt = this.clock();
    // As the TypeORM adapter does: the entity first, then the row.
    Object.assign(workflow, changes, { updatedAt });
    await this.updateRow(
      own,
      'workflows',
      workflow.id,
      this.encode('workflows', { ...changes, updatedAt }),
    );
  }

  async updateExecution(
    tx: RepositoryTransaction,
    execution: StepExecutionEntity,
    changes: ExecutionChanges,
  ): Promise<void> {
    const own = this.own(tx);
    const updatedAt = this.clock();
    await this.updateRow(
      own,
      'executions',
      execution.id,
      this.encode('executions', { ...changes, updatedAt }),
    );
    Object.assign(execution, changes, { updatedAt });
  }

  async sweepStrayExecutions(tx: RepositoryTransaction, workflowId: string): Promise<void> {
    const own = this.own(tx);
    const now = this.clock();
    const stray = this.select(
      own,
      'executions',
      (row) =>
        row.workflowId === workflowId && (row.state === 'scheduled' || row.state === 'waiting'),
    );
    for (const row of stray) {
      await this.updateRow(
        own,
        'executions',
        row.id,
        this.encode('executions', {
          state: 'canceled',
          outcome: 'canceled',
          canceledAt: now,
          finishedAt: now,
          updatedAt: now,
        }),
      );
    }
  }

  // --- signals -----------------------------------------------------------------------------------

  findSignalByKey(
    tx: RepositoryTransaction,
    workflowId: string,
    name: string,
    idempotencyKey: string,
  ): Promise<SignalEntity | null> {
    return statement(() => {
      this.requireSignalsTable();
      const [found] = this.select(
        this.own(tx),
        'signals',
        (row) =>
          row.workflowId === workflowId &&
          row.name === name &&
          row.idempotencyKey === idempotencyKey,
      );
      return this.hydrateOrNull('signals', found);
    });
  }

  findSignal(tx: RepositoryTransaction, id: string): Promise<SignalEntity | null> {
    return statement(() => {
      this.requireSignalsTable();
      return this.hydrateOrNull('signals', this.viewRow(this.own(tx), 'signals', id));
    });
  }

  attachableSignals(tx: RepositoryTransaction, workflowId: string): Promise<SignalEntity[]> {
    return statement(() => {
      this.requireSignalsTable();
      return this.select(
        this.own(tx),
        'signals',
        (row) => row.workflowId === workflowId && row.state !== 'consumed',
      )
        .sort(byCreation)
        .map((row) => this.hydrate('signals', row));
    });
  }

  waitingExecutions(tx: RepositoryTransaction, workflowId: string): Promise<StepExecutionEntity[]> {
    return statement(() =>
      this.select(
        this.own(tx),
        'executions',
        (row) => row.workflowId === workflowId && row.state === 'waiting',
      )
        .sort(byCreation)
        .map((row) => this.hydrate('executions', row)),
    );
  }

  attachedExecutions(tx: RepositoryTransaction, signalId: string): Promise<StepExecutionEntity[]> {
    return statement(() => {
      this.requireColumn('signals', 'signal_id');
      return this.select(this.own(tx), 'executions', (row) => row.signalId === signalId)
        .sort(byCreation)
        .map((row) => this.hydrate('executions', row));
    });
  }

  async insertSignal(tx: RepositoryTransaction, fields: NewSignal): Promise<SignalEntity> {
    const own = this.own(tx);
    this.requireSignalsTable();
    const now = this.clock();
    const signal = newSignalRow(uuidv7(), fields, now);
    const row = this.encode('signals', signal);
    if (fields.idempotencyKey === null) {
      await this.insertRow(own, 'signals', row);
      return signal;
    }
    // ON CONFLICT DO NOTHING, then the stored row: a redelivery returns the first one.
    if (await this.insertRow(own, 'signals', row, { onConflictDoNothing: true })) return signal;
    const stored = await this.findSignalByKey(
      tx,
      fields.workflowId,
      fields.name,
      fields.idempotencyKey,
    );
    if (!stored) return signal;
    stored.duplicateDelivery = true;
    return stored;
  }

  async updateSignal(
    tx: RepositoryTransaction,
    signal: SignalEntity,
    changes: SignalChanges,
  ): Promise<void> {
    const own = this.own(tx);
    this.requireSignalsTable();
    const updatedAt = this.clock();
    await this.updateRow(
      own,
      'signals',
      signal.id,
      this.encode('signals', { ...changes, updatedAt }),
    );
    Object.assign(signal, changes, { updatedAt });
  }

  signalsOf(workflowId: string): Promise<SignalEntity[]> {
    return statement(() => {
      this.requireSignalsTable();
      return this.select(null, 'signals', (row) => row.workflowId === workflowId)
        .sort(byCreation)
        .map((row) => this.hydrate('signals', row));
    });
  }

  // --- heroes and checkpoints --------------------------------------------------------------------

  identifyHero(
    hero: unknown,
    definition: WorkflowDefinition | undefined,
    method: string,
  ): HeroIdentity {
    if (hero === null || typeof hero !== 'object' || Array.isArray(hero)) {
      throw new InvalidArgumentError(
        `${method} hero must be an object with an id, but was ${describeValue(hero)}.`,
      );
    }
    const declared: unknown = definition?.hero?.();
    const ownClass: unknown = hero.constructor;
    if (
      typeof declared === 'function' &&
      typeof ownClass === 'function' &&
      ownClass !== Object &&
      !(hero instanceof declared)
    ) {
      throw new InvalidArgumentError(
        `${method} got a ${ownClass.name} as hero, but ${definition!.name} declares hero: () => ${declared.name}. Pass a hero of that class.`,
      );
    }
    const heroType =
      heroTypeName(declared) ?? (ownClass === Object ? null : heroTypeName(ownClass));
    if (!heroType) {
      throw new InvalidArgumentError(
        `${method} cannot tell the hero's type: pass an instance of a class, or declare @Workflow({ hero: () => Class }).`,
      );
    }
    const id: unknown = (hero as { id?: unknown }).id;
    if ((typeof id === 'number' && Number.isFinite(id)) || (typeof id === 'string' && id !== '')) {
      return { heroType, heroId: String(id) };
    }
    throw new InvalidArgumentError(
      `${method} hero ${heroType} needs an id (a finite number or a non-empty string), but its id was ${describeValue(id)}.`,
    );
  }

  loadHero(tx: RepositoryTransaction, heroType: string, heroId: string): Promise<object | null> {
    return statement(() => {
      this.own(tx);
      const ofType = this.heroes.get(heroType);
      if (!ofType) {
        throw new StepConfigurationError(
          `hero_type '${heroType}' names no hero type registered with the in-memory repository. Call registerHero('${heroType}', id, hero) in the test.`,
        );
      }
      return ofType.get(heroId) ?? null;
    });
  }

  writeCursor(execution: StepExecutionEntity, cursor: unknown): Promise<WorkflowState | null> {
    return statement(() => {
      this.requireColumn('resumable', 'cursor');
      // Outside any transaction: one statement, applied at once. A transaction that changed
      // other columns of the row meanwhile applies only those at its commit.
      const row = this.tables.executions.get(execution.id);
      if (!row) return null;
      const stored = this.encode('executions', { cursor, updatedAt: this.clock() });
      this.tables.executions.set(row.id, { ...row, ...stored, id: row.id });
      const workflow = this.tables.workflows.get(row.workflowId as string);
      return workflow ? (workflow.state as WorkflowState) : null;
    });
  }

  workflowState(workflowId: string): Promise<WorkflowState | null> {
    return statement(() => {
      const workflow = this.tables.workflows.get(workflowId);
      return workflow ? (workflow.state as WorkflowState) : null;
    });
  }

  // --- housekeeping ------------------------------------------------------------------------------

  /** One process, one lock: a flag; a run that finds it taken resolves null without running. */
  async tryWithHousekeepingLock<T>(work: () => Promise<T>): Promise<T | null> {
    if (this.housekeepingLockHeld) return null;
    this.housekeepingLockHeld = true;
    try {
      return await work();
    } finally {
      this.housekeepingLockHeld = false;
    }
  }

  finishedWorkflowIds(cutoff: Date, limit: number): Promise<string[]> {
    return statement(() =>
      this.select(null, 'workflows', (row) => finishedBefore(row, cutoff))
        .sort(byCreation)
        .slice(0, limit)
        .map((row) => row.id),
    );
  }

  deleteChildren(
    kind: 'executions' | 'signals',
    workflowIds: readonly string[],
    limit: number,
  ): Promise<number> {
    return this.transaction((tx) =>
      statement(() => {
        if (kind === 'signals') this.requireSignalsTable();
        const own = this.own(tx);
        const rows = this.select(own, kind, (row) => workflowIds.includes(row.workflowId as string))
          .sort(byCreation)
          .slice(0, limit);
        for (const row of rows) this.deleteRow(own, kind, row.id);
        return rows.length;
      }),
    );
  }

  deleteFinishedWorkflows(ids: readonly string[], cutoff: Date): Promise<number> {
    return this.transaction(async (tx) => {
      const own = this.own(tx);
      let deleted = 0;
      // A DELETE waits for the rows' locks, then checks its condition again.
      for (const id of [...new Set(ids)].sort()) {
        await this.lock(own, id);
        const row = this.viewRow(own, 'workflows', id);
        if (!row || !finishedBefore(row, cutoff)) continue;
        this.deleteRow(own, 'workflows', id);
        deleted += 1;
      }
      return deleted;
    });
  }

  stuckExecutions(
    kind: StuckKind,
    cutoff: Date,
    limit: number,
    after: StuckPageStart | null,
  ): Promise<StepExecutionEntity[]> {
    return statement(() => {
      const column = kind === 'in_progress' ? 'startedAt' : 'scheduledFor';
      const at = (row: Row) => time(row[column]) ?? 0;
      return this.select(null, 'executions', (row) => {
        const value = time(row[column]);
        if (row.state !== kind || value === null || value >= cutoff.getTime()) return false;
        if (kind === 'scheduled' && !this.runnableWorkflow(row.workflowId as string)) return false;
        if (!after) return true;
        return value > after.at.getTime() || (value === after.at.getTime() && row.id > after.id);
      })
        .sort((a, b) => at(a) - at(b) || compareIds(a, b))
        .slice(0, limit)
        .map((row) => this.hydrate('executions', row));
    });
  }

  overdueWaits(
    now: Date,
    limit: number,
    after: StuckPageStart | null,
  ): Promise<StepExecutionEntity[]> {
    return statement(() => {
      const deadline = (row: Row) => time(row.waitDeadlineAt);
      return this.select(null, 'executions', (row) => {
        const value = deadline(row);
        if (row.state !== 'waiting' || value === null || value > now.getTime()) return false;
        if (this.tables.workflows.get(row.workflowId as string)?.state !== 'ready') return false;
        if (!after) return true;
        return value > after.at.getTime() || (value === after.at.getTime() && row.id > after.id);
      })
        .sort((a, b) => (deadline(a) ?? 0) - (deadline(b) ?? 0) || compareIds(a, b))
        .slice(0, limit)
        .map((row) => this.hydrate('executions', row));
    });
  }

  deletePendingSignals(cutoff: Date, limit: number): Promise<number> {
    return this.transaction((tx) =>
      statement(() => {
        this.requireSignalsTable();
        const own = this.own(tx);
        const rows = this.select(
          own,
          'signals',
          (row) => row.state === 'pending' && (time(row.createdAt) ?? 0) < cutoff.getTime(),
        )
          .sort(byCreation)
          .slice(0, limit);
        for (const row of rows) this.deleteRow(own, 'signals', row.id);
        return rows.length;
      }),
    );
  }

  workflowsOf(ids: readonly string[]): Promise<Map<string, WorkflowEntity>> {
    return statement(() => {
      const workflows = new Map<string, WorkflowEntity>();
      for (const id of ids) {
        const workflow = this.tables.workflows.get(id);
        if (workflow && !workflows.has(id)) workflows.set(id, this.hydrate('workflows', workflow));
      }
      return workflows;
    });
  }

  scheduledExecutions(
    settledBefore: Date,
    limit: number,
    after: StepExecutionEntity | null,
  ): Promise<ScheduledExecutionsPage> {
    return statement(() => {
      const due = (row: Row) => time(row.scheduledFor) ?? 0;
      const executions = this.select(null, 'executions', (row) => {
        if (row.state !== 'scheduled') return false;
        if (!this.runnableWorkflow(row.workflowId as string)) return false;
        const updatedAt = time(row.updatedAt);
        if (updatedAt === null || updatedAt >= settledBefore.getTime()) return false;
        if (!after) return true;
        const afterAt = after.scheduledFor.getTime();
        return due(row) > afterAt || (due(row) === afterAt && row.id > after.id);
      })
        .sort((a, b) => due(a) - due(b) || compareIds(a, b))
        .slice(0, limit)
        .map((row) => this.hydrate('executions', row));
      const workflows = new Map<string, WorkflowEntity>();
      for (const { workflowId } of executions) {
        const workflow = this.tables.workflows.get(workflowId);
        if (workflow && !workflows.has(workflowId))
          workflows.set(workflowId, this.hydrate('workflows', workflow));
      }
      return { executions, workflows };
    });
  }

  workflowCounts(): Promise<Array<{ type: string; state: WorkflowState; count: number }>> {
    return statement(() => {
      const counts = new Map<string, { type: string; state: WorkflowState; count: number }>();
      for (const row of this.tables.workflows.values()) {
        const key = JSON.stringify([row.type, row.state]);
        const entry = counts.get(key) ?? {
          type: row.type as string,
          state: row.state as WorkflowState,
          count: 0,
        };
        entry.count += 1;
        counts.set(key, entry);
      }
      return [...counts.values()];
    });
  }

  waitingCounts(waitingSinceBefore?: Date): Promise<Array<{ type: string; count: number }>> {
    return statement(() => {
      const counts = new Map<string, number>();
      for (const row of this.tables.executions.values()) {
        if (row.state !== 'waiting') continue;
        if (waitingSinceBefore) {
          const since = time(row.waitingSince);
          if (since === null || since >= waitingSinceBefore.getTime()) continue;
        }
        const workflow = this.tables.workflows.get(row.workflowId as string);
        if (!workflow) continue;
        const type = workflow.type as string;
        counts.set(type, (counts.get(type) ?? 0) + 1);
      }
      return [...counts].map(([type, count]) => ({ type, count }));
    });
  }

  ping(): Promise<void> {
    return statement(() => undefined);
  }

  // --- transactions, locks, commit ---------------------------------------------------------------

  private immediateEnqueuer(): ((job: StepJob) => Promise<void>) | null {
    if (this.enqueueAfterCommit && !isInlineEnqueue()) return null;
    return (job) => this.handOff([job]);
  }

  /** The caller's transaction when it is an open one of this repository; null for none. */
  private callerTransaction(caller: unknown): InMemoryTransaction | null {
    if (caller === undefined || caller === null) return null;
    if (!(caller instanceof InMemoryTransaction) || caller.owner !== this) {
      throw new InvalidArgumentError(
        'The manager option of the in-memory repository must be a transaction of that repository (the tx its transaction() passes to the work).',
      );
    }
    // Like a manager without an active transaction: no caller transaction.
    return caller.active && caller.root.active ? caller : null;
  }

  /** The work in a savepoint of the caller's transaction: undone alone when it throws. */
  private async savepoint<T>(
    caller: InMemoryTransaction,
    work: (tx: RepositoryTransaction) => Promise<T>,
  ): Promise<T> {
    const root = caller.root;
    const saved = copyOverlay(root.overlay);
    const savedJobs = root.deferredJobs.length;
    const savedAfterCommit = root.afterCommitWork.length;
    const tx = new InMemoryTransaction(this, caller, this.immediateEnqueuer());
    try {
      const result = await work(tx);
      await tx.runBeforeCommit();
      return result;
    } catch (error) {
      root.overlay = saved;
      root.deferredJobs.length = savedJobs;
      root.afterCommitWork.length = savedAfterCommit;
      throw error;
    } finally {
      tx.end();
    }
  }

  private finish(tx: InMemoryTransaction): void {
    tx.end();
    this.openTransactions.delete(tx);
    this.releaseLocks(tx);
  }

  private async handOff(jobs: readonly StepJob[]): Promise<void> {
    const copies = jobs.map((job) => ({ ...job }));
    this.handedOff.push(...copies);
    if (!this.sink) return;
    try {
      await this.sink(copies);
    } catch (error) {
      // As the JobDispatcher: the transaction has committed, the rows stay scheduled.
      this.logger.warn(
        `In-memory repository: the committed-jobs sink threw for ${copies.map((job) => job.jobId).join(', ')}: ${String(error)}`,
      );
    }
  }

  /** The transaction object of this repository, checked to be open. */
  private own(tx: RepositoryTransaction): InMemoryTransaction {
    if (!(tx instanceof InMemoryTransaction) || tx.owner !== this) {
      throw new InvalidArgumentError(
        'The in-memory repository was given a transaction it did not create.',
      );
    }
    tx.assertActive();
    return tx;
  }

  /** Takes the workflow's row lock for the transaction (re-entrant; FIFO among waiters). */
  private async lock(tx: InMemoryTransaction, workflowId: string): Promise<void> {
    const root = tx.root;
    const lock = this.workflowLocks.get(workflowId);
    if (!lock) {
      this.workflowLocks.set(workflowId, { holder: root, waiters: [] });
      root.heldLocks.add(workflowId);
      return;
    }
    if (lock.holder === root) return;
    this.waitFor(root, lock.holder);
    await new Promise<void>((granted) => lock.waiters.push({ tx: root, granted }));
    root.waitingFor = null;
  }

  private releaseLocks(root: InMemoryTransaction): void {
    for (const id of root.heldLocks) {
      const lock = this.workflowLocks.get(id);
      if (!lock) continue;
      const next = lock.waiters.shift();
      if (next) {
        lock.holder = next.tx;
        next.tx.heldLocks.add(id);
        next.granted();
      } else {
        this.workflowLocks.delete(id);
      }
    }
    root.heldLocks.clear();
  }

  /** Records that `waiter` waits for `holder`, refusing a wait that closes a cycle. */
  private waitFor(waiter: InMemoryTransaction, holder: InMemoryTransaction): void {
    for (let tx: InMemoryTransaction | null = holder; tx; tx = tx.waitingFor) {
      if (tx === waiter) {
        throw new InMemoryDatabaseError(
          'deadlock_detected',
          'Deadlock detected: two in-memory transactions wait for each other.',
        );
      }
    }
    waiter.waitingFor = holder;
  }

  /** Applies the transaction's overlay to the committed rows, all at once, or throws and applies nothing. */
  private commit(tx: InMemoryTransaction): void {
    const next: Tables = { ...this.tables };
    const touched = TABLE_NAMES.filter((table) => tx.overlay[table].size > 0);
    const deletedWorkflows: string[] = [];
    for (const table of touched) {
      const rows = (next[table] = new Map(this.tables[table]));
      for (const [id, pending] of tx.overlay[table]) {
        if (pending.kind === 'insert') {
          if (rows.has(id)) throw this.uniqueViolation(`${table}_pkey`, table, id);
          rows.set(id, pending.row);
        } else if (pending.kind === 'update') {
          const base = rows.get(id);
          // An UPDATE of a row someone deleted meanwhile changes nothing.
          if (base) rows.set(id, { ...base, ...pending.changes, id });
        } else {
          rows.delete(id);
          if (table === 'workflows') deletedWorkflows.push(id);
        }
      }
    }
    if (deletedWorkflows.length > 0) {
      // ON DELETE CASCADE, also for children committed after this transaction read them.
      for (const child of ['executions', 'signals'] as const) {
        const rows = next[child] === this.tables[child] ? new Map(this.tables[child]) : next[child];
        for (const [id, row] of rows) {
          if (deletedWorkflows.includes(row.workflowId as string)) rows.delete(id);
        }
        next[child] = rows;
      }
    }
    for (const table of touched) this.verifyUnique(next, table);
    for (const child of ['executions', 'signals'] as const) {
      for (const [id, pending] of tx.overlay[child]) {
        const row = next[child].get(id);
        if (pending.kind === 'delete' || !row) continue;
        if (!next.workflows.has(row.workflowId as string))
          throw this.foreignKeyViolation(child, row);
      }
    }
    this.tables = next;
  }

  private verifyUnique(tables: Tables, table: TableName): void {
    for (const rule of UNIQUE_RULES) {
      if (rule.table !== table) continue;
      const seen = new Set<string>();
      for (const row of tables[table].values()) {
        const key = rule.key(row);
        if (key === null) continue;
        if (seen.has(key)) throw this.uniqueViolation(rule.name, table, key);
        seen.add(key);
      }
    }
  }

  // --- reads and writes through a transaction's view ----------------------------------------------

  /** The row as `tx` sees it (committed, plus its own changes); committed only without `tx`. */
  private viewRow(tx: InMemoryTransaction | null, table: TableName, id: string): Row | undefined {
    const committed = this.tables[table].get(id);
    const pending = tx?.root.overlay[table].get(id);
    if (!pending) return committed;
    if (pending.kind === 'insert') return pending.row;
    if (pending.kind === 'delete' || !committed) return undefined;
    return { ...committed, ...pending.changes, id };
  }

  /** Rows of the table as `tx` sees them, filtered, in no particular order. */
  private select(
    tx: InMemoryTransaction | null,
    table: TableName,
    where: (row: Row) => boolean,
  ): Row[] {
    const rows: Row[] = [];
    for (const id of this.tables[table].keys()) {
      const row = this.viewRow(tx, table, id);
      if (row && where(row)) rows.push(row);
    }
    for (const [id, pending] of tx?.root.overlay[table] ?? []) {
      if (pending.kind === 'insert' && !this.tables[table].has(id) && where(pending.row))
        rows.push(pending.row);
    }
    return rows;
  }

  /**
   * Inserts the row in the transaction's overlay once no other open transaction holds an
   * uncommitted row with the same key (it waits for those, as PostgreSQL does). Resolves false
   * when `onConflictDoNothing` and a row of the view holds one of its keys.
   */
  private async insertRow(
    tx: InMemoryTransaction,
    table: TableName,
    row: Row,
    { onConflictDoNothing = false } = {},
  ): Promise<boolean> {
    for (;;) {
      const blocker = this.blockerOf(tx, table, row);
      if (blocker) {
        await this.waitForTransaction(tx, blocker);
        continue;
      }
      if (table !== 'workflows') {
        const parent = this.viewRow(tx, 'workflows', row.workflowId as string);
        if (!parent) throw this.foreignKeyViolation(table, row);
      }
      const conflict =
        this.viewRow(tx, table, row.id) !== undefined
          ? `${table}_pkey`
          : this.conflictingRule(tx, table, row);
      if (conflict) {
        if (onConflictDoNothing) return false;
        throw this.uniqueViolation(conflict, table, row.id);
      }
      tx.root.overlay[table].set(row.id, { kind: 'insert', row });
      return true;
    }
  }

  /** Sets columns of the row in the transaction's overlay; an absent row changes nothing. */
  private async updateRow(
    tx: InMemoryTransaction,
    table: TableName,
    id: string,
    values: Readonly<Record<string, unknown>>,
  ): Promise<void> {
    for (;;) {
      const current = this.viewRow(tx, table, id);
      if (!current) return;
      const next: Row = { ...current, ...values, id };
      const blocker = this.blockerOf(tx, table, next);
      if (blocker) {
        await this.waitForTransaction(tx, blocker);
        continue;
      }
      const conflict = this.conflictingRule(tx, table, next);
      if (conflict) throw this.uniqueViolation(conflict, table, id);
      const overlay = tx.root.overlay[table];
      const pending = overlay.get(id);
      overlay.set(
        id,
        pending?.kind === 'insert'
          ? { kind: 'insert', row: next }
          : {
              kind: 'update',
              changes: { ...(pending?.kind === 'update' ? pending.changes : {}), ...values },
            },
      );
      return;
    }
  }

  private deleteRow(tx: InMemoryTransaction, table: TableName, id: string): void {
    const overlay = tx.root.overlay[table];
    if (overlay.get(id)?.kind === 'insert') overlay.delete(id);
    else if (this.tables[table].has(id)) overlay.set(id, { kind: 'delete' });
    if (table !== 'workflows') return;
    for (const child of ['executions', 'signals'] as const) {
      for (const row of this.select(tx, child, (candidate) => candidate.workflowId === id))
        this.deleteRow(tx, child, row.id);
    }
  }

  /** The unique index of `table` another row of the view already holds `row`'s key in, if any. */
  private conflictingRule(tx: InMemoryTransaction, table: TableName, row: Row): string | null {
    for (const rule of UNIQUE_RULES) {
      if (rule.table !== table) continue;
      const key = rule.key(row);
      if (key === null) continue;
      if (
        this.select(tx, table, (other) => other.id !== row.id && rule.key(other) === key).length > 0
      )
        return rule.name;
    }
    return null;
  }

  /**
   * Another open transaction with an uncommitted change to a row that has `row`'s id or one of
   * its unique keys (before or after the change): the write must wait for it.
   */
  private blockerOf(
    tx: InMemoryTransaction,
    table: TableName,
    row: Row,
  ): InMemoryTransaction | null {
    const keys = UNIQUE_RULES.filter((rule) => rule.table === table)
      .map((rule) => ({ rule, key: rule.key(row) }))
      .filter((entry) => entry.key !== null);
    const holds = (candidate: Row | undefined) =>
      candidate !== undefined && keys.some(({ rule, key }) => rule.key(candidate) === key);
    for (const other of this.openTransactions) {
      if (other === tx.root) continue;
      for (const [id, pending] of other.overlay[table]) {
        const before = this.tables[table].get(id);
        const after =
          pending.kind === 'insert'
            ? pending.row
            : pending.kind === 'update' && before
              ? { ...before, ...pending.changes, id }
              : undefined;
        if (id === row.id || holds(after) || (pending.kind !== 'insert' && holds(before)))
          return other;
      }
    }
    return null;
  }

  private async waitForTransaction(
    tx: InMemoryTransaction,
    blocker: InMemoryTransaction,
  ): Promise<void> {
    this.waitFor(tx.root, blocker);
    await blocker.settled;
    tx.root.waitingFor = null;
  }

  private runnableWorkflow(workflowId: string): boolean {
    const workflow = this.tables.workflows.get(workflowId);
    return (
      workflow !== undefined && RUNNABLE_WORKFLOW_STATES.includes(workflow.state as WorkflowState)
    );
  }

  // --- column encoding -------------------------------------------------------------------------

  /** Entity values as stored: JSON columns as text, dates copied, hidden and non-columns dropped. */
  private encode(table: TableName, values: object): Row {
    const row: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(values)) {
      // TypeORM leaves undefined properties out of INSERT and UPDATE statements.
      if (value === undefined || NOT_COLUMNS.has(key) || this.hidden(table, key)) continue;
      if (JSON_COLUMNS[table].includes(key)) row[key] = encodeJson(key, value);
      else row[key] = value instanceof Date ? new Date(value.getTime()) : value;
    }
    return row as Row;
  }

  /** A fresh entity instance from a stored row (JSON parsed, dates copied, hidden columns left out). */
  private hydrate<T extends TableName>(table: T, row: Row): EntityOf[T] {
    const entity = new ENTITY_CLASS[table]() as EntityOf[T];
    const target = entity as unknown as Record<string, unknown>;
    for (const [key, value] of Object.entries(row)) {
      if (this.hidden(table, key)) continue;
      if (JSON_COLUMNS[table].includes(key)) target[key] = decodeJson(key, value);
      else target[key] = value instanceof Date ? new Date(value.getTime()) : value;
    }
    return entity;
  }

  private hydrateOrNull<T extends TableName>(table: T, row: Row | undefined): EntityOf[T] | null {
    return row ? this.hydrate(table, row) : null;
  }

  private hidden(table: TableName, key: string): boolean {
    if (table === 'workflows') {
      return WORKFLOW_CONTEXT_COLUMNS.has(key) && !this.schemaFeatures.workflowContext;
    }
    if (table !== 'executions') return false;
    if (RESUMABLE_COLUMNS.has(key)) return !this.schemaFeatures.resumable;
    if (SIGNAL_COLUMNS.has(key)) return !this.schemaFeatures.signals;
    if (WAIT_TIMEOUT_COLUMNS.has(key)) return !this.schemaFeatures.waitTimeouts;
    return false;
  }

  private requireSignalsTable(): void {
    if (!this.schemaFeatures.signals) {
      throw new InMemoryDatabaseError(
        'undefined_table',
        'relation "geneva_drive_signals" does not exist (the signals migration has not run)',
      );
    }
  }

  private requireColumn(feature: keyof SchemaFeatures, column: string): void {
    if (!this.schemaFeatures[feature]) {
      throw new InMemoryDatabaseError(
        'undefined_column',
        `column "${column}" does not exist (the ${feature === 'resumable' ? 'resumable-steps' : 'signals'} migration has not run)`,
      );
    }
  }

  private uniqueViolation(
    constraint: string,
    table: TableName,
    key: string,
  ): InMemoryDatabaseError {
    return new InMemoryDatabaseError(
      'unique_violation',
      `duplicate key value violates unique constraint "${constraint}" (${table}: ${key})`,
      constraint,
    );
  }

  private foreignKeyViolation(table: TableName, row: Row): InMemoryDatabaseError {
    const constraint = `geneva_drive_${table === 'executions' ? 'step_executions' : 'signals'}_workflow_id_fkey`;
    return new InMemoryDatabaseError(
      'foreign_key_violation',
      `insert or update on ${table} violates foreign key constraint "${constraint}": workflow ${String(row.workflowId)} does not exist`,
      constraint,
    );
  }
}

function encodeJson(column: string, value: unknown): string | null {
  if (value === null) return null;
  const json = JSON.stringify(column === 'cursor' ? cursorTransformer.to(value) : value);
  return json === undefined ? null : json;
}

function decodeJson(column: string, text: unknown): unknown {
  if (text === null || text === undefined) return null;
  const value = JSON.parse(text as string) as unknown;
  return column === 'cursor' ? cursorTransformer.from(value) : value;
}

function heroTypeName(target: unknown): string | null {
  if (typeof target === 'string' && target !== '') return target;
  if (typeof target === 'function' && target.name !== '') return target.name;
  const schemaName = (target as { options?: { name?: unknown } } | null | undefined)?.options?.name;
  return typeof schemaName === 'string' && schemaName !== '' ? schemaName : null;
}
