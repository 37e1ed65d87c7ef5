import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { QueryRunner } from 'typeorm';
import { ErrorReportingService } from '../observability/error-reporting.service';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { isInlineEnqueue } from './inline-enqueue.context';
import type { StepJob } from './step-job.interface';
import { StepJobQueue } from './step-job.queue';
import { TransportOutage } from './transport-outage';

/** How long a committed transaction's caller waits for its jobs to reach the transport. */
const ENQUEUE_PATIENCE_MS = 1_000;

/** What waits for a caller's commit: the jobs, and the work to run before they are enqueued. */
interface CommittedWork {
  jobs: StepJob[];
  afterCommit: Array<() => void>;
}

/**
 * Decides when step jobs reach the queue: after the library's own transaction commits, after the
 * caller's outermost transaction commits, or at once (inline enqueue).
 */
@Injectable()
export class JobDispatcher implements OnModuleDestroy {
  private readonly pendingByQueryRunner = new WeakMap<QueryRunner, CommittedWork>();
  /** Enqueues `handOver` started and no caller waits for. */
  private readonly handedOver = new Set<Promise<void>>();

  constructor(
    private readonly queue: StepJobQueue,
    private readonly outage: TransportOutage,
    private readonly errors: ErrorReportingService,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  /** The immediate enqueue function for a new unit of work, or null to defer until commit. */
  immediateEnqueuer(): ((job: StepJob) => Promise<void>) | null {
    if (this.options.enqueueAfterCommit && !isInlineEnqueue()) return null;
    return (job) => this.queue.add(job);
  }

  /**
   * Enqueues jobs of a committed library transaction; failures are reported, not thrown. Waits at
   * most `ENQUEUE_PATIENCE_MS`: a transport that is down never holds up `start()` or `signal()`
   * (the committed row is the obligation). A late enqueue goes on in the background and lands when
   * the transport answers again; the outage is told once.
   */
  async flush(jobs: readonly StepJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const enqueue = this.enqueue(jobs);
    let patience: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      enqueue.then(() => false),
      new Promise<boolean>(
        (resolve) => (patience = setTimeout(() => resolve(true), ENQUEUE_PATIENCE_MS)),
      ),
    ]);
    clearTimeout(patience);
    if (late) {
      await this.outage.failed(
        new Error(
          `enqueueing ${jobs.length} step job(s) did not finish within ${ENQUEUE_PATIENCE_MS} ms`,
        ),
      );
    }
  }

  private async enqueue(jobs: readonly StepJob[]): Promise<void> {
    if (jobs.length > 1) {
      try {
        // One round trip per queue; should it fail, each job is tried on its own (an add of a
        // job id the queue already holds is ignored), so one bad job loses no other.
        await this.queue.addBulk(jobs);
        this.outage.recovered();
        return;
      } catch {
        // fall through
      }
    }
    for (const job of jobs) {
      try {
        await this.queue.add(job);
        this.outage.recovered();
      } catch (error) {
        // During an outage the outage was reported once; each job's row stays scheduled.
        if (!this.outage.ongoing) await this.reportEnqueueFailure(job, error);
      }
    }
  }

  /**
   * A library transaction has committed: its after-commit work runs first (synchronously, so
   * nothing its jobs do can come before it), then its jobs are enqueued.
   */
  async committed(jobs: readonly StepJob[], afterCommit: ReadonlyArray<() => void>): Promise<void> {
    try {
      afterCommit.forEach((work) => work());
    } finally {
      await this.flush(jobs);
    }
  }

  /**
   * As `committed`, without waiting for the jobs: the after-commit work runs now, the enqueue goes
   * on in the background from the event loop's next turn, so the caller's own continuation (the
   * return of `signal()`) is not held up by the transport client's work. What is still on its way
   * when the app shuts down is waited for first (`onModuleDestroy`, before any queue closes).
   */
  handOver(jobs: readonly StepJob[], afterCommit: ReadonlyArray<() => void>): void {
    try {
      afterCommit.forEach((work) => work());
    } finally {
      if (jobs.length > 0) {
        // flush() reports its failures itself and waits at most ENQUEUE_PATIENCE_MS.
        const handedOver = new Promise<void>((resolve) => setImmediate(resolve))
          .then(() => this.flush(jobs))
          .catch(() => undefined)
          .finally(() => this.handedOver.delete(handedOver));
        this.handedOver.add(handedOver);
      }
    }
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.handedOver]);
  }

  /** Holds jobs and after-commit work until the caller's transaction (on this query runner) commits. */
  deferToCaller(
    queryRunner: QueryRunner,
    jobs: readonly StepJob[],
    afterCommit: ReadonlyArray<() => void>,
  ): void {
    if (jobs.length === 0 && afterCommit.length === 0) return;
    const pending = this.pendingByQueryRunner.get(queryRunner) ?? { jobs: [], afterCommit: [] };
    pending.jobs.push(...jobs);
    pending.afterCommit.push(...afterCommit);
    this.pendingByQueryRunner.set(queryRunner, pending);
  }

  /** Called on every commit; acts only on the outermost one (savepoint releases also fire). */
  onCallerCommit(queryRunner: QueryRunner): void {
    if (queryRunner.isTransactionActive) return;
    const pending = this.pendingByQueryRunner.get(queryRunner);
    if (!pending) return;
    this.pendingByQueryRunner.delete(queryRunner);
    // Never awaited: a commit hook must not wait on Redis. Failures are reported inside flush.
    void this.committed(pending.jobs, pending.afterCommit);
  }

  onCallerRollback(queryRunner: QueryRunner): void {
    if (queryRunner.isTransactionActive) return;
    this.pendingByQueryRunner.delete(queryRunner);
  }

  private async reportEnqueueFailure(job: StepJob, error: unknown): Promise<void> {
    const failure = error instanceof Error ? error : new Error(String(error));
    failure.message = `Could not enqueue step job ${job.jobId}; the execution stays scheduled for housekeeping recovery: ${failure.message}`;
    await this.errors.report(failure, {
      workflowId: '',
      workflowClass: '',
      stepExecutionId: job.stepExecutionId,
      stepName: null,
      heroType: null,
      heroId: null,
    });
  }
}
