import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { InjectResolvedOptions } from '../../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../../options/resolved-options.interface';
import type { StepJob } from '../../queue/step-job.interface';
import { stepJobData } from '../../queue/step-job-data';
import type { StepJobInspector, StepJobPresence } from '../../queue/step-job-inspector';
import type {
  QueueJobCounts,
  QueueTransportStatus,
  StepJobTransportProbe,
} from '../../queue/step-job-transport-probe';
import { StepJobQueue } from '../../queue/step-job.queue';
import { ShutdownSignal } from '../../resumable/shutdown.signal';
import { WorkflowRunner } from '../../runner/workflow.runner';

/** The longest delay a Node timer holds (2^31 - 1 ms): longer ones are armed in several legs. */
const MAX_TIMER_DELAY_MS = 2_147_483_647;
/** Finished job ids remembered for `jobPresence` (and duplicate adds), oldest forgotten first. */
const FINISHED_IDS_KEPT = 10_000;
/** Concurrency of a queue that is not in the `queues` option: it still runs here (one process). */
const UNLISTED_QUEUE_CONCURRENCY = 1;

interface LocalQueue {
  concurrency: number;
  active: number;
  /** Due jobs, in the order they run: unprioritized first (as BullMQ), then by priority, FIFO. */
  ready: StepJob[];
}

/**
 * The `local` transport (SPEC §16.5): step jobs in this process, no Redis. A due job runs through
 * the same `WorkflowRunner` entry points as a BullMQ worker's (`performJob` with its queue and
 * priority, so chaining decides alike; `expireWait` for a wait's timer), each queue with its
 * `queues` concurrency; a delayed job waits on a timer. Nothing here is durable: the rows are.
 * `LocalTransportRecovery` enqueues every `scheduled` row at boot, and housekeeping's
 * reconciliation (this queue answers `jobPresence`) catches anything lost while running.
 */
@Injectable()
export class LocalStepJobQueue
  extends StepJobQueue
  implements StepJobInspector, StepJobTransportProbe, BeforeApplicationShutdown
{
  private readonly logger = new Logger('GenevaDrive');
  private readonly queues = new Map<string, LocalQueue>();
  /** Jobs added and not yet finished (delayed, ready or running), by id. */
  private readonly pending = new Map<string, StepJob>();
  private readonly finished = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private started = false;
  private closed = false;

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly shutdown: ShutdownSignal,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {
    super();
  }

  /** Ignores a job id it holds or finished recently, as BullMQ ignores an id that exists. */
  add(job: StepJob): Promise<void> {
    if (this.closed || this.pending.has(job.jobId) || this.finished.has(job.jobId)) {
      return Promise.resolve();
    }
    this.pending.set(job.jobId, job);
    this.after(Math.max(0, job.delay), () => this.makeReady(job));
    return Promise.resolve();
  }

  /** Runs due jobs from now on (until then they only collect: the app is still booting). */
  start(): void {
    this.started = true;
    for (const name of this.queues.keys()) this.drain(name);
  }

  jobPresence(_queue: string, jobIds: readonly string[]): Promise<Map<string, StepJobPresence>> {
    const presence = new Map<string, StepJobPresence>();
    for (const id of jobIds) {
      presence.set(
        id,
        this.pending.has(id) ? 'pending' : this.finished.has(id) ? 'finished' : 'missing',
      );
    }
    return Promise.resolve(presence);
  }

  /** The queues this process consumes, each with one worker: this process. */
  transportStatus(): Promise<QueueTransportStatus[]> {
    return Promise.resolve(
      Object.keys(this.options.queues).map((queue) => ({ queue, workers: this.closed ? 0 : 1 })),
    );
  }

  /** The queues this process consumes and any it was handed jobs for, counted in memory. */
  jobCounts(): Promise<QueueJobCounts[]> {
    const names = new Set([...Object.keys(this.options.queues), ...this.queues.keys()]);
    return Promise.resolve(
      [...names].map((name) => {
        const queue = this.queues.get(name);
        let held = 0;
        for (const job of this.pending.values()) if (job.queue === name) held += 1;
        const waiting = queue?.ready.length ?? 0;
        const active = queue?.active ?? 0;
        return { queue: name, waiting, delayed: held - waiting - active, active };
      }),
    );
  }

  /**
   * Stops taking jobs, asks resumable steps to stop at their next checkpoint, and waits for the
   * running ones, before `@nestjs/typeorm` destroys the DataSource. What did not run stays
   * `scheduled` in the database for the next boot.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.closed = true;
    this.shutdown.raise();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private makeReady(job: StepJob): void {
    const queue = this.queueNamed(job.queue);
    const at = queue.ready.findIndex((other) => runsBefore(job, other));
    if (at === -1) queue.ready.push(job);
    else queue.ready.splice(at, 0, job);
    this.drain(job.queue);
  }

  private drain(name: string): void {
    const queue = this.queueNamed(name);
    while (this.started && !this.closed && queue.active < queue.concurrency) {
      const job = queue.ready.shift();
      if (!job) return;
      queue.active += 1;
      const run = this.run(job).finally(() => {
        queue.active -= 1;
        this.running.delete(run);
        this.settle(job);
        this.drain(name);
      });
      this.running.add(run);
    }
  }

  private async run(job: StepJob): Promise<void> {
    const runner = this.moduleRef.get(WorkflowRunner, { strict: false });
    const data = stepJobData(job);
    try {
      if (job.kind === 'expireWait') await runner.expireWait(data);
      else await runner.performJob(data, { queue: job.queue, priority: job.priority });
    } catch (error) {
      // As a BullMQ job fails: the runner has recorded the state change, or left the row for
      // housekeeping (a database outage outlasting its retries).
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      this.logger.warn(`Step job ${job.jobId} (queue '${job.queue}') failed: ${message}`);
    }
  }

  private settle(job: StepJob): void {
    this.pending.delete(job.jobId);
    this.finished.add(job.jobId);
    if (this.finished.size > FINISHED_IDS_KEPT) {
      this.finished.delete(this.finished.values().next().value as string);
    }
  }

  private queueNamed(name: string): LocalQueue {
    let queue = this.queues.get(name);
    if (!queue) {
      const concurrency = this.options.queues[name]?.concurrency ?? UNLISTED_QUEUE_CONCURRENCY;
      this.queues.set(name, (queue = { concurrency, active: 0, ready: [] }));
    }
    return queue;
  }

  /** Runs `work` after `delay` ms (in legs of at most a Node timer's reach). */
  private after(delay: number, work: () => void): void {
    if (delay === 0) return work();
    const leg = Math.min(delay, MAX_TIMER_DELAY_MS);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.closed) return;
      if (delay > leg) this.after(delay - leg, work);
      else work();
    }, leg);
    this.timers.add(timer);
  }
}

/** BullMQ's order: unprioritized jobs before prioritized ones, then lower priority first, FIFO. */
function runsBefore(job: StepJob, other: StepJob): boolean {
  if (job.priority === undefined) return other.priority !== undefined;
  return other.priority !== undefined && job.priority < other.priority;
}
