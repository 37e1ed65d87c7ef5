import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnModuleDestroy,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import type { StepJob } from '../queue/step-job.interface';
import { StepJobQueue } from '../queue/step-job.queue';
import { WorkflowRunner } from '../runner/workflow.runner';
import type { EnqueuedJob } from './enqueued-job.interface';
import type { ResolvedTestingOptions } from './testing-module-options.interface';
import { InjectTestingOptions } from './testing-options.token';

/** The longest delay a Node timer holds (2^31 - 1 ms). */
const MAX_TIMER_DELAY_MS = 2_147_483_647;

/**
 * The testing module's queue: records every job in process (no Redis) and ignores an add whose
 * job id it already holds, as BullMQ does. Without `autoRun` it never runs anything; with it, each
 * job runs through `WorkflowRunner.performStep` once its delay has passed, like a worker, and a
 * step's exception is logged (the runner has already recorded it and changed state).
 */
@Injectable()
export class InMemoryStepJobQueue
  extends StepJobQueue
  implements OnModuleDestroy, BeforeApplicationShutdown
{
  private readonly logger = new Logger('GenevaDrive');
  private readonly jobs: EnqueuedJob[] = [];
  private readonly jobIds = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly running = new Set<Promise<void>>();
  private closed = false;

  constructor(
    private readonly moduleRef: ModuleRef,
    @InjectTestingOptions() private readonly testingOptions: ResolvedTestingOptions,
  ) {
    super();
  }

  add(job: StepJob): Promise<void> {
    if (this.jobIds.has(job.jobId)) return Promise.resolve();
    if (job.kind === 'expireWait') {
      // A wait's timer is not a step job: it is not listed, and fires (with autoRun) when due.
      this.jobIds.add(job.jobId);
      if (this.testingOptions.autoRun && !this.closed) this.scheduleTimeout(job);
      return Promise.resolve();
    }
    const recorded: EnqueuedJob = {
      jobId: job.jobId,
      stepExecutionId: job.stepExecutionId,
      queue: job.queue,
      delay: Math.max(0, Math.round(job.delay)),
    };
    if (job.priority !== undefined) recorded.priority = job.priority;
    this.jobIds.add(job.jobId);
    this.jobs.push(recorded);
    if (this.testingOptions.autoRun && !this.closed) this.schedule(recorded);
    return Promise.resolve();
  }

  /** Every job recorded since boot, oldest first (copies). */
  recorded(): EnqueuedJob[] {
    return this.jobs.map((job) => ({ ...job }));
  }

  /** How many jobs wait on a timer (autoRun only). */
  get scheduledCount(): number {
    return this.timers.size;
  }

  /** Stops scheduling: pending timers are cleared, later adds are only recorded. */
  onModuleDestroy(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  /** Waits for steps already running, before `@nestjs/typeorm` destroys the DataSource. */
  async beforeApplicationShutdown(): Promise<void> {
    this.onModuleDestroy();
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private schedule(job: EnqueuedJob): void {
    this.after(job.delay, () => this.run(job));
  }

  private scheduleTimeout(job: StepJob): void {
    this.after(job.delay, async () => {
      try {
        await this.moduleRef
          .get(WorkflowRunner, { strict: false })
          .expireWait({ stepExecutionId: job.stepExecutionId, workflowId: job.workflowId });
      } catch (error) {
        const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        this.logger.warn(`Wait timeout job ${job.jobId} failed: ${message}`);
      }
    });
  }

  /**
   * Runs `work` after `delay` ms, tracked for shutdown. A delay beyond what a Node timer holds
   * (about 24.8 days) is never run: Node would fire it at once instead.
   */
  private after(delay: number, work: () => Promise<void>): void {
    if (delay > MAX_TIMER_DELAY_MS) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.closed) return;
      const run = work();
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
    }, delay);
    this.timers.add(timer);
  }

  private async run(job: EnqueuedJob): Promise<void> {
    try {
      await this.moduleRef.get(WorkflowRunner, { strict: false }).performStep(job.stepExecutionId);
    } catch (error) {
      // As a BullMQ worker would: the job fails, the runner already recorded the state change.
      const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      this.logger.warn(`Step job ${job.jobId} (queue '${job.queue}') failed: ${message}`);
    }
  }
}
