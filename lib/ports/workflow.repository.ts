import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import type { SignalEntity } from '../entities/signal.entity';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import type { WorkflowState } from '../interfaces/states.interface';
import type { StepJob } from '../queue/step-job.interface';

/** Which optional migrations have run (code may be deployed before its migration). */
export interface SchemaFeatures {
  /** `cursor` and `continues_from_id` exist (the resumable-steps migration). */
  resumable: boolean;
  /** The signals table, `signal_id` and `waiting_since` exist (the signals migration). */
  signals: boolean;
  /** `wait_deadline_at` and the retention index exist (the signal-timeouts migration). */
  waitTimeouts: boolean;
  /** The workflow-context migration (SPEC §16.6): `context` and `trace_parent` on workflows. */
  workflowContext: boolean;
}

/**
 * One library transaction as the engine sees it: work is registered on it, rows are read and
 * written through the repository with it. Adapters give it whatever they need underneath.
 */
export interface RepositoryTransaction {
  /** Whether rows are locked (`FOR UPDATE`); false where the database serializes instead (SQLite). */
  readonly locks: boolean;
  /** Enqueues after the commit (or at once inside `withInlineEnqueue`/`enqueueAfterCommit: false`). */
  enqueue(job: StepJob): Promise<void>;
  /** Runs `work` once before the commit; a later registration under the same key is ignored. */
  beforeCommit(key: string, work: () => Promise<void>): void;
  /**
   * Runs `work` once the transaction has committed (the caller's outermost commit inside a
   * caller's transaction), before its jobs are enqueued: an event published there comes before
   * anything those jobs do. Synchronous; never run on rollback.
   */
  afterCommit(work: () => void): void;
}

/** How a transaction runs. */
export interface TransactionOptions {
  /**
   * The caller's transaction handle (`manager` of `start()`/`signal()`): the work runs inside it,
   * in a savepoint, and its jobs wait for the caller's commit. Opaque to the engine.
   */
  caller?: unknown;
  /**
   * The runner's transactions and `start()`'s: changes to workflow rows are merged and written
   * once before the commit, and the adapter may save round trips (PostgreSQL: writes held back
   * and sent with the COMMIT, so a unique index may refuse one only there).
   */
  hotPath?: boolean;
  /**
   * The call resolves once the transaction commits; its jobs reach the transport after that, in
   * the background (`signal()`: the committed rows are the obligation, housekeeping recovers a
   * job that never arrives). Pending ones are finished before the app shuts down.
   */
  enqueueInBackground?: boolean;
}

export type WorkflowChanges = Partial<Omit<WorkflowEntity, 'id' | 'createdAt' | 'updatedAt'>>;
export type ExecutionChanges = Partial<
  Omit<StepExecutionEntity, 'id' | 'workflowId' | 'createdAt' | 'updatedAt'>
>;
export type SignalChanges = Partial<Omit<SignalEntity, 'id' | 'workflowId' | 'createdAt'>>;

export type NewWorkflow = Pick<
  WorkflowEntity,
  'type' | 'heroType' | 'heroId' | 'allowMultiple' | 'metadata'
> &
  Pick<WorkflowEntity, 'context' | 'traceParent'>;
/** A workflow of a bulk start: its first step may be named at insert time. */
export type NewBulkWorkflow = NewWorkflow & Partial<Pick<WorkflowEntity, 'nextStepName'>>;
export type NewExecution = Pick<StepExecutionEntity, 'workflowId' | 'stepName' | 'scheduledFor'> &
  ExecutionChanges;
export type NewSignal = Pick<SignalEntity, 'workflowId' | 'name' | 'idempotencyKey' | 'payload'>;

/** What a signal delivery decides on, read under the workflow row lock (`lockForSignal`). */
export interface SignalDeliveryRows {
  workflow: WorkflowEntity | null;
  /** The signal already holding the idempotency key, if a key was given and one does. */
  duplicate: SignalEntity | null;
  /** The workflow's executions parked waiting for a signal, oldest first. */
  waiting: StepExecutionEntity[];
}

/**
 * A step that a delivery of one signal name may wake, as `(workflow type, step name)`. The matchers
 * of `wakes` accept every signal of that name; those of `undecided` may or may not (a predicate, a
 * custom matcher) and need their code run.
 */
export interface SignalStepRef {
  workflowType: string;
  stepName: string;
}

/** How the data source's connections reach the database server (`databaseRoute`). */
export interface DatabaseRoute {
  /**
   * What the data source connects to, in an operator's words: `host:port`, a Unix socket, a
   * replication set-up.
   */
  target: string;
  /** The server's own `address:port` on such a connection, as it reports them; null on a socket. */
  server: string | null;
  /** The server answers on the very address and port connected to: nothing in between. */
  direct: boolean;
}

/** A delivery whose wake-ups can be decided from names alone (`deliverSignalAtOnce`). */
export interface AtOnceSignalDelivery extends NewSignal {
  wakes: readonly SignalStepRef[];
  undecided: readonly SignalStepRef[];
}

/** What a delivery's jobs need of an execution it woke. */
export type WokenExecution = Pick<
  StepExecutionEntity,
  'id' | 'workflowId' | 'stepName' | 'signalId' | 'scheduledFor' | 'createdAt'
> & {
  jobId: string;
  /** The whole row as the committed wake left it, where the adapter returns it. */
  row?: StepExecutionEntity;
};

/** What `deliverSignalAtOnce` did, committed. */
export type AtOnceSignalOutcome =
  | { kind: 'missing' }
  /** Finished or canceled, and no signal held the idempotency key: nothing was written. */
  | { kind: 'not-ongoing'; workflow: WorkflowEntity }
  | { kind: 'duplicate'; signal: SignalEntity }
  /** Inserted; `woken` are the executions it woke (now `scheduled`, job id set), oldest first. */
  | {
      kind: 'delivered';
      workflow: WorkflowEntity;
      signal: SignalEntity;
      woken: WokenExecution[];
    }
  /** A parked step's matcher must run: nothing was written; deliver the ordinary way. */
  | { kind: 'undecided' };

/** How a hero is stored on a workflow row. */
export interface HeroIdentity {
  heroType: string;
  heroId: string;
}

/** What `WorkflowService.list()` filters by, resolved to stored values. */
export interface WorkflowListQuery {
  type?: string;
  states?: readonly WorkflowState[];
  /** true: only ready/performing/paused; false: only finished/canceled. */
  ongoing?: boolean;
  hero?: HeroIdentity;
  limit?: number;
  offset?: number;
}

/** Where a keyset page of workflows starts: after this row in `(created_at desc, id desc)` order. */
export interface WorkflowPageStart {
  createdAt: Date;
  id: string;
}

/** The dashboard's workflow filter (SPEC §16.4), resolved to stored values; every field narrows. */
export interface WorkflowSearchQuery {
  types?: readonly string[];
  states?: readonly WorkflowState[];
  heroType?: string;
  heroId?: string;
  /** The step the workflow is at: its current step, or the next one when none is current. */
  stepName?: string;
  /** Only workflows with an execution parked for a signal since before this instant. */
  waitingSinceBefore?: Date;
  /** `created_at` at or after. */
  createdFrom?: Date;
  /** `created_at` before. */
  createdBefore?: Date;
  /** Matches the workflow id exactly, or the hero id exactly. */
  text?: string;
}

/** A page of the search: newest first, after `after` when given. */
export interface WorkflowSearchPage {
  after?: WorkflowPageStart;
  limit: number;
}

/** The two kinds of stuck executions, named by the state they are stuck in. */
export type StuckKind = 'in_progress' | 'scheduled';

/** Where a keyset page of stuck executions starts: after this row in `(timestamp, id)` order. */
export interface StuckPageStart {
  at: Date;
  id: string;
}

/** A page of scheduled executions of runnable workflows, with those workflows by id. */
export interface ScheduledExecutionsPage {
  executions: StepExecutionEntity[];
  workflows: Map<string, WorkflowEntity>;
}

/** A page of a keyset-paginated read. */
export interface PageRequest {
  offset: number;
  limit: number;
}

/**
 * Every read and write of the library's tables, in the engine's vocabulary (SPEC §16.1). The
 * engine, the service, signals, resumable steps and housekeeping hold this token; adapters own
 * the SQL: PostgreSQL (the runner's hot path), TypeORM (MariaDB/MySQL, SQLite, callers'
 * transactions), and an in-memory one for unit tests of the state machine.
 *
 * Row-lock order is always the workflow row, then its executions and signals. Every write sets
 * `updated_at` from the application clock and updates the entity passed in.
 */
/**
 * Hints of what a step's transaction reads after its locks: the workflow's hero, the signal its
 * execution is pinned to. Hints only: what is read is what the locked rows name.
 */
export interface StepReadAhead {
  hero?: HeroIdentity | null;
  signalId?: string | null;
}

/**
 * The rows of a step as this process left them at its last commit, with its hero (a step chain),
 * or as a signal delivery of this process left them (a woken execution: its pinned `signal`,
 * which `findSignal` answers until the commit; the hero is not known then, and `hero` stands in).
 */
export interface StepRowsAsLeft {
  workflow: WorkflowEntity;
  execution: StepExecutionEntity;
  hero: object | null;
  signal?: SignalEntity;
}

/** What `lockForStepAsLeft` resolves: copies of the rows as left, and the hero read meanwhile. */
export interface GuessedStepRows {
  workflow: WorkflowEntity;
  execution: StepExecutionEntity;
  /** After the commit: the hero read under the locks (null for none). */
  heroAfterCommit: () => object | null;
}

export abstract class WorkflowRepository {
  /** Which optional migrations have run, as last checked. */
  abstract get features(): SchemaFeatures;

  /** Checks the optional migrations again (one may have run since boot). */
  abstract refreshSchemaFeatures(): Promise<SchemaFeatures>;

  /** Runs `work` in one transaction (READ COMMITTED); jobs it enqueues go out after the commit. */
  abstract transaction<T>(
    work: (tx: RepositoryTransaction) => Promise<T>,
    options?: TransactionOptions,
  ): Promise<T>;

  /** Whether `error` is a database error (a failed statement), as opposed to a fault of user code. */
  abstract isDatabaseError(error: unknown): boolean;

  /** Whether `error` is a unique-index violation (an ongoing workflow for the hero already exists). */
  abstract isUniqueViolation(error: unknown): boolean;

  // --- workflows and step executions -------------------------------------------------------

  /** Locks and reads the workflow row. */
  abstract lockWorkflow(tx: RepositoryTransaction, id: string): Promise<WorkflowEntity | null>;

  /**
   * Locks the workflow row, then the execution row (read after the workflow lock is held).
   * `readAhead` names rows this transaction will read next: an adapter may read them after the
   * locks in the same round trip, and `loadHero` / `findSignal` then answer from that read once.
   */
  abstract lockForStep(
    tx: RepositoryTransaction,
    workflowId: string,
    executionId: string,
    readAhead?: StepReadAhead,
  ): Promise<{ workflow: WorkflowEntity | null; execution: StepExecutionEntity | null }>;

  /**
   * `lockForStep` for a transaction that expects the rows exactly as this process left them at its
   * last commit (`left`, with the hero it loaded then; `readAhead.hero` names that hero): resolves
   * copies of them without waiting for the read, and the adapter makes the transaction's writes
   * land only if, once locked, the rows are still as left (a fence). When they were not, the
   * transaction commits nothing and its work runs again in a new transaction, which reads first
   * (its jobs and after-commit work are dropped): the work must run `lockForStep` then.
   * `heroAfterCommit` gives, after the commit, the hero read under the locks (`loadHero` answers
   * `left.hero` until then); `left.signal` must still be there too. Null where the adapter cannot
   * guess (the default); the caller then calls `lockForStep`.
   */
  lockForStepAsLeft(
    _tx: RepositoryTransaction,
    _left: StepRowsAsLeft,
    _readAhead: StepReadAhead,
  ): GuessedStepRows | null {
    return null;
  }

  abstract findWorkflow(id: string): Promise<WorkflowEntity | null>;

  /** The newest ongoing workflow of this type for this hero, if any. */
  abstract findOngoing(type: string, hero: HeroIdentity): Promise<WorkflowEntity | null>;

  /** Workflows matching the query, newest first. */
  abstract listWorkflows(query: WorkflowListQuery): Promise<WorkflowEntity[]>;

  /** Workflows matching the search, newest first `(created_at desc, id desc)`, one keyset page. */
  abstract searchWorkflows(
    query: WorkflowSearchQuery,
    page: WorkflowSearchPage,
  ): Promise<WorkflowEntity[]>;

  /** How many workflows match the search. */
  abstract countWorkflows(query: WorkflowSearchQuery): Promise<number>;

  /** Step name ⇒ executions of ongoing workflows of `type` still at one of `stepNames`. */
  abstract countOngoingAtSteps(
    type: string,
    stepNames: readonly string[],
  ): Promise<Record<string, number>>;

  abstract findExecution(id: string): Promise<StepExecutionEntity | null>;

  /** The execution in scheduled, waiting or in_progress, if any (locked when `tx.locks`). */
  abstract currentExecution(
    tx: RepositoryTransaction | null,
    workflowId: string,
  ): Promise<StepExecutionEntity | null>;

  /** Executions of one step, newest first (a page of them with `page`). */
  abstract executionsOfStep(
    tx: RepositoryTransaction,
    workflowId: string,
    stepName: string,
    page?: PageRequest,
  ): Promise<StepExecutionEntity[]>;

  /** The newest execution that continues `executionId` (a resumable chain's successor), if any. */
  abstract successorOf(
    tx: RepositoryTransaction | null,
    executionId: string,
  ): Promise<StepExecutionEntity | null>;

  /** Every execution of the workflow, oldest first. */
  abstract executionHistory(workflowId: string): Promise<StepExecutionEntity[]>;

  abstract insertWorkflow(tx: RepositoryTransaction, fields: NewWorkflow): Promise<WorkflowEntity>;

  abstract insertExecution(
    tx: RepositoryTransaction,
    fields: NewExecution,
    id?: string,
  ): Promise<StepExecutionEntity>;

  /**
   * Of these heroes, those with an ongoing workflow of `type` that the one-ongoing-per-hero index
   * covers (`allow_multiple` false), read under the transaction (a locking read where a
   * consistent read could miss a committed row).
   */
  abstract ongoingHeroes(
    tx: RepositoryTransaction,
    type: string,
    heroes: readonly HeroIdentity[],
  ): Promise<HeroIdentity[]>;

  /**
   * Inserts the workflows in multi-row statements (`startMany()`, SPEC §16.7), resolving them in
   * input order. `'error'`: a unique violation rejects. `'skip'`: a row the one-ongoing-per-hero
   * index refuses (an ongoing workflow committed meanwhile, the index is the arbiter) is left out
   * and its position resolves null.
   */
  abstract insertWorkflows(
    tx: RepositoryTransaction,
    rows: readonly NewBulkWorkflow[],
    onConflict: 'error' | 'skip',
  ): Promise<Array<WorkflowEntity | null>>;

  /** Inserts the executions in multi-row statements, resolving them in input order. */
  abstract insertExecutions(
    tx: RepositoryTransaction,
    rows: readonly NewExecution[],
  ): Promise<StepExecutionEntity[]>;

  abstract updateWorkflow(
    tx: RepositoryTransaction,
    workflow: WorkflowEntity,
    changes: WorkflowChanges,
  ): Promise<void>;

  abstract updateExecution(
    tx: RepositoryTransaction,
    execution: StepExecutionEntity,
    changes: ExecutionChanges,
  ): Promise<void>;

  /** Cancels every scheduled or waiting execution of the workflow (in-progress rows stay). */
  abstract sweepStrayExecutions(tx: RepositoryTransaction, workflowId: string): Promise<void>;

  // --- signals -------------------------------------------------------------------------------

  /**
   * Locks the workflow row, then reads what a delivery of signal `name` decides on: the signal
   * already holding `idempotencyKey` and the parked executions. Adapters that can send the three
   * reads in one round trip do (the reads still run after the lock is granted).
   */
  async lockForSignal(
    tx: RepositoryTransaction,
    workflowId: string,
    name: string,
    idempotencyKey: string | null,
  ): Promise<SignalDeliveryRows> {
    const workflow = await this.lockWorkflow(tx, workflowId);
    if (!workflow) return { workflow, duplicate: null, waiting: [] };
    const duplicate =
      idempotencyKey === null
        ? null
        : await this.findSignalByKey(tx, workflowId, name, idempotencyKey);
    return { workflow, duplicate, waiting: await this.waitingExecutions(tx, workflowId) };
  }

  /**
   * The whole delivery in one go where the adapter can (PostgreSQL: one message with its COMMIT),
   * deciding as `SignalSender` does under the lock: dedupe, refuse a finished or canceled
   * workflow, insert, and wake the executions parked at `wakes` unless the workflow is paused.
   * Writes nothing (`undecided`) when the workflow is running and has an execution parked at an
   * `undecided` step. Null where the adapter cannot (the caller then locks and decides itself).
   * The transaction has committed when it resolves: nothing may be written with `tx` afterwards.
   */
  deliverSignalAtOnce(
    _tx: RepositoryTransaction,
    _delivery: AtOnceSignalDelivery,
  ): Promise<AtOnceSignalOutcome | null> {
    return Promise.resolve(null);
  }

  /** The duplicate-signal lookup. */
  abstract findSignalByKey(
    tx: RepositoryTransaction,
    workflowId: string,
    name: string,
    idempotencyKey: string,
  ): Promise<SignalEntity | null>;

  abstract findSignal(tx: RepositoryTransaction, id: string): Promise<SignalEntity | null>;

  /** Signals not yet consumed, oldest first (FIFO). */
  abstract attachableSignals(
    tx: RepositoryTransaction,
    workflowId: string,
  ): Promise<SignalEntity[]>;

  /** Executions parked waiting for a signal, oldest first. */
  abstract waitingExecutions(
    tx: RepositoryTransaction,
    workflowId: string,
  ): Promise<StepExecutionEntity[]>;

  /** Every execution ever attached to the signal, oldest first. */
  abstract attachedExecutions(
    tx: RepositoryTransaction,
    signalId: string,
  ): Promise<StepExecutionEntity[]>;

  /**
   * Inserts a pending signal. With an idempotency key, a row already holding that key wins: it is
   * returned with `duplicateDelivery = true` and nothing is inserted.
   */
  abstract insertSignal(tx: RepositoryTransaction, fields: NewSignal): Promise<SignalEntity>;

  abstract updateSignal(
    tx: RepositoryTransaction,
    signal: SignalEntity,
    changes: SignalChanges,
  ): Promise<void>;

  /** Every signal of the workflow, oldest first. */
  abstract signalsOf(workflowId: string): Promise<SignalEntity[]>;

  // --- heroes and checkpoints ----------------------------------------------------------------

  /**
   * The `(hero_type, hero_id)` of a hero given to `start()`, `findOngoing()` or `list()`; refuses
   * with `InvalidArgumentError` what cannot be stored or loaded back (`method` names the caller).
   */
  abstract identifyHero(
    hero: unknown,
    definition: WorkflowDefinition | undefined,
    method: string,
  ): HeroIdentity;

  /** Loads the hero in the transaction, or null when its row is gone; an unknown type throws. */
  abstract loadHero(
    tx: RepositoryTransaction,
    heroType: string,
    heroId: string,
  ): Promise<object | null>;

  /**
   * A resumable step's checkpoint: writes the cursor outside any transaction; resolves the
   * workflow's state when the same statement could read it, else null.
   */
  abstract writeCursor(
    execution: StepExecutionEntity,
    cursor: unknown,
  ): Promise<WorkflowState | null>;

  /** The workflow's state alone (the checkpoint's pause/cancel check). */
  abstract workflowState(workflowId: string): Promise<WorkflowState | null>;

  // --- housekeeping (each call its own short transaction, at most one batch of rows) ---------

  /**
   * Runs `work` under the database-wide housekeeping lock (one run per tick across a cluster);
   * resolves null without running it while another process holds the lock. Works behind a
   * transaction-mode pooler.
   */
  abstract tryWithHousekeepingLock<T>(work: () => Promise<T>): Promise<T | null>;

  /** Ids of finished or canceled workflows that ended before `cutoff`, at most `limit`. */
  abstract finishedWorkflowIds(cutoff: Date, limit: number): Promise<string[]>;

  /** Deletes up to `limit` executions or signals of the workflows; resolves how many. */
  abstract deleteChildren(
    kind: 'executions' | 'signals',
    workflowIds: readonly string[],
    limit: number,
  ): Promise<number>;

  /** Deletes those of the workflows still finished or canceled before `cutoff`; resolves how many. */
  abstract deleteFinishedWorkflows(ids: readonly string[], cutoff: Date): Promise<number>;

  /** Executions in `kind` since before `cutoff` (scheduled ones of runnable workflows), in order. */
  abstract stuckExecutions(
    kind: StuckKind,
    cutoff: Date,
    limit: number,
    after: StuckPageStart | null,
  ): Promise<StepExecutionEntity[]>;

  /**
   * Parked executions of ready workflows whose `wait_deadline_at` is at or before `now` (id,
   * workflow id, deadline), in `(wait_deadline_at, id)` order after `after`.
   */
  abstract overdueWaits(
    now: Date,
    limit: number,
    after: StuckPageStart | null,
  ): Promise<StepExecutionEntity[]>;

  /**
   * Deletes up to `limit` of the oldest `pending` signals created before `cutoff` (claimed and
   * consumed ones are never touched); resolves how many.
   */
  abstract deletePendingSignals(cutoff: Date, limit: number): Promise<number>;

  /** The workflows of these ids that exist (id, type, state, metadata), by id. */
  abstract workflowsOf(ids: readonly string[]): Promise<Map<string, WorkflowEntity>>;

  /** Scheduled executions of runnable workflows not updated since `settledBefore`, in order. */
  abstract scheduledExecutions(
    settledBefore: Date,
    limit: number,
    after: StepExecutionEntity | null,
  ): Promise<ScheduledExecutionsPage>;

  /** Workflow counts by class and state. */
  abstract workflowCounts(): Promise<Array<{ type: string; state: WorkflowState; count: number }>>;

  /** One round trip to the database, for the health indicator; rejects when it is unreachable. */
  abstract ping(): Promise<void>;

  /**
   * Whether connections reach the database server with no pooler or proxy in between, as far as
   * it can be proven; null where the adapter cannot tell (not PostgreSQL). For operators
   * (`geneva-drive doctor`): named statements are safe on a direct connection.
   */
  databaseRoute(): Promise<DatabaseRoute | null> {
    return Promise.resolve(null);
  }

  /** Parked executions by class (only those waiting since before the date, when given). */
  abstract waitingCounts(
    waitingSinceBefore?: Date,
  ): Promise<Array<{ type: string; count: number }>>;
}
