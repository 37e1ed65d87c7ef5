import type { EntityManager } from 'typeorm';
import type { SignalEntity } from '../../entities/signal.entity';
import type { StepJob } from '../../queue/step-job.interface';
import type { PostgresQueryBatch } from '../postgres/postgres-query-batch';

/** Work registered to run inside the transaction, after its body and before its commit. */
type BeforeCommit = () => Promise<void>;

/**
 * One library transaction: its manager (every query inside uses it, never a second connection),
 * the jobs to enqueue once it commits, and writes held back until just before the commit.
 */
export class UnitOfWork {
  readonly deferredJobs: StepJob[] = [];
  /** Run by the transaction wrapper once the commit is done, before `deferredJobs` are enqueued. */
  readonly afterCommitWork: Array<() => void> = [];
  private readonly beforeCommitWork = new Map<string, BeforeCommit>();
  /** A hero read beside the row locks, not yet asked for (see `takeHeroReadAhead`). */
  private heroReadAhead: { heroType: string; heroId: string; hero: object | null } | null = null;
  /** A signal read beside the row locks; dropped by any write to the signals table. */
  private signalReadAhead: { id: string; signal: SignalEntity | null } | null = null;

  constructor(
    private readonly entityManager: EntityManager,
    /** Whether the database takes row locks (`FOR UPDATE`); SQLite serializes instead. */
    readonly locks: boolean,
    private readonly enqueueNow: ((job: StepJob) => Promise<void>) | null,
    /**
     * MariaDB/MySQL: every read that decides a transition is a locking read (`FOR UPDATE`), since a
     * consistent read there may use a snapshot taken before the workflow lock was granted (a
     * caller's REPEATABLE READ transaction) and miss a row that changed meanwhile (SPEC §15.10).
     */
    readonly lockingReads = false,
    /**
     * The runner's transactions change the locked workflow row several times (finish a step,
     * point at the next, start it) and never read it back with SQL: those changes are merged and
     * written once, before the commit.
     */
    readonly coalescesWorkflowWrites = false,
    /** PostgreSQL, the runner's transactions: round trips are saved (see PostgresQueryBatch). */
    readonly batch: PostgresQueryBatch | null = null,
  ) {}

  /**
   * The transaction's TypeORM manager, once everything held back has been sent: a query through
   * it sees every write of this unit of work.
   */
  async manager(): Promise<EntityManager> {
    // A statement sent through TypeORM would not carry the fence of a guessed transaction.
    if (this.batch?.guessed)
      throw new Error(
        'UnitOfWork: a transaction that guessed its rows (PostgresQueryBatch.guess) writes through its batch only.',
      );
    if (this.batch) await this.batch.flush();
    return this.entityManager;
  }

  /**
   * The manager for reading tables the library never writes (a hero's): the transaction is open,
   * but held-back writes may stay pending, saving a round trip.
   */
  async managerForOtherTables(): Promise<EntityManager> {
    if (this.batch) await this.batch.open();
    return this.entityManager;
  }

  /** Enqueues after commit, or at once inside `withInlineEnqueue` / with `enqueueAfterCommit: false`. */
  async enqueue(job: StepJob): Promise<void> {
    if (this.enqueueNow) await this.enqueueNow(job);
    else this.deferredJobs.push(job);
  }

  /** Runs `work` once before the commit; a later registration under the same key is ignored. */
  beforeCommit(key: string, work: BeforeCommit): void {
    if (!this.beforeCommitWork.has(key)) this.beforeCommitWork.set(key, work);
  }

  /** Runs `work` once committed, before the jobs are enqueued. */
  afterCommit(work: () => void): void {
    this.afterCommitWork.push(work);
  }

  /** Keeps a hero read in the lock round trip for the `loadHero` that follows. */
  keepHeroReadAhead(heroType: string, heroId: string, hero: object | null): void {
    this.heroReadAhead = { heroType, heroId, hero };
  }

  /** The hero read ahead, if it is this one; handed out once, so a later load reads again. */
  takeHeroReadAhead(heroType: string, heroId: string): { hero: object | null } | null {
    const readAhead = this.heroReadAhead;
    this.heroReadAhead = null;
    if (!readAhead || readAhead.heroType !== heroType || readAhead.heroId !== heroId) return null;
    return { hero: readAhead.hero };
  }

  keepSignalReadAhead(id: string, signal: SignalEntity | null): void {
    this.signalReadAhead = { id, signal };
  }

  /** The signal read ahead, if it is this one and no signal was written since; handed out once. */
  takeSignalReadAhead(id: string): { signal: SignalEntity | null } | null {
    const readAhead = this.signalReadAhead;
    this.signalReadAhead = null;
    return readAhead?.id === id ? { signal: readAhead.signal } : null;
  }

  /** A write to the signals table: what was read ahead of it is no longer what a read would see. */
  signalsWritten(): void {
    this.signalReadAhead = null;
  }

  /** Called by the transaction wrapper after the body succeeded. */
  async runBeforeCommit(): Promise<void> {
    for (const work of this.beforeCommitWork.values()) await work();
    this.beforeCommitWork.clear();
  }
}
