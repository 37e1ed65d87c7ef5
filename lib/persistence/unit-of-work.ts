import type { EntityManager } from 'typeorm';
import type { StepJob } from '../queue/step-job.interface';

/**
 * One library transaction: its manager (every query inside uses it, never a second connection),
 * and the jobs to enqueue once it commits.
 */
export class UnitOfWork {
  readonly deferredJobs: StepJob[] = [];

  constructor(
    readonly manager: EntityManager,
    /** Whether the database takes row locks (`FOR UPDATE`); SQLite serializes instead. */
    readonly locks: boolean,
    private readonly enqueueNow: ((job: StepJob) => Promise<void>) | null,
    /**
     * MariaDB/MySQL: every read that decides a transition is a locking read (`FOR UPDATE`), since a
     * consistent read there may use a snapshot taken before the workflow lock was granted (a
     * caller's REPEATABLE READ transaction) and miss a row that changed meanwhile (SPEC §15.10).
     */
    readonly lockingReads = false,
  ) {}

  /** Enqueues after commit, or at once inside `withInlineEnqueue` / with `enqueueAfterCommit: false`. */
  async enqueue(job: StepJob): Promise<void> {
    if (this.enqueueNow) await this.enqueueNow(job);
    else this.deferredJobs.push(job);
  }
}
