import type { JobsOptions } from 'bullmq';
import type { StepJobData } from '../../queue/step-job.interface';

/**
 * What the library uses of a BullMQ `Queue`, whatever its backend (a `Queue` on Redis and one on
 * PostgreSQL are different instantiations of the generic class).
 */
export interface BullmqQueueHandle {
  add(name: string, data: StepJobData, opts?: JobsOptions): Promise<unknown>;
  addBulk(jobs: Array<{ name: string; data: StepJobData; opts?: JobsOptions }>): Promise<unknown>;
  getJobState(jobId: string): Promise<string>;
  getWorkersCount(): Promise<number>;
  getJobCounts(...types: string[]): Promise<Record<string, number>>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  waitUntilReady(): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Where the BullMQ step-job queue finds its `Queue` handles: on Redis the queues `@nestjs/bullmq`
 * registered plus lazily created produce-only ones; on PostgreSQL (BullMQ's PostgreSQL backend)
 * queues the library creates itself, since `@nestjs/bullmq` takes no backend. An abstract class
 * so it doubles as the DI token.
 */
export abstract class BullmqQueueSource {
  /** The queue named `name`, created on first use when this process does not consume it. */
  abstract queue(name: string): BullmqQueueHandle;

  /** The queues this process consumes that exist now (boot may have failed before some). */
  abstract consumedQueues(): BullmqQueueHandle[];
}
