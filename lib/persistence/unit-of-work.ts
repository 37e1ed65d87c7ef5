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
  ) {}

  /** Enqueues after commit, or at once inside `withInlineEnqueue` / with `enqueueAfterCommit: false`. */
  async enqueue(job: StepJob): Promise<void> {
    if (this.enqueueNow) await this.enqueueNow(job);
    else this.deferredJobs.push(job);
  }
}
