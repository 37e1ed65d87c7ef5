import { Injectable, type OnModuleInit } from '@nestjs/common';
import { EXPIRE_WAIT_JOB_NAME, PERFORM_STEP_JOB_NAME } from '../../common/constants';
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
import { TransportOutage } from '../../queue/transport-outage';
import { BullmqQueueSource } from './bullmq-queue.source';

/** Jobs per `addBulk` of a bulk enqueue (see `addBulk`). */
const ADD_CHUNK = 100;

/** Job-state lookups sent at once (on Redis, ioredis pipelines concurrent commands). */
const PRESENCE_CHUNK = 200;

/**
 * Step jobs on BullMQ, on Redis or on BullMQ's PostgreSQL backend (the `BullmqQueueSource` says
 * which). Job states can be looked up (`StepJobInspector`) for the reconciliation of scheduled
 * executions.
 */
@Injectable()
export class BullmqStepJobQueue
  extends StepJobQueue
  implements StepJobInspector, StepJobTransportProbe, OnModuleInit
{
  constructor(
    private readonly queues: BullmqQueueSource,
    private readonly outage: TransportOutage,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {
    super();
  }

  /**
   * Listens to the consumed queues' connection errors: without a listener BullMQ prints every
   * reconnect attempt of an unreachable transport; with it, the outage is told once.
   */
  onModuleInit(): void {
    for (const queue of this.queues.consumedQueues())
      queue.on('error', (error: Error) => void this.outage.failed(error));
  }

  async add(job: StepJob): Promise<void> {
    const { name, data, opts } = bullmqJob(job);
    await this.queues.queue(job.queue).add(name, data, opts);
  }

  /**
   * `addBulk` per queue the jobs go to, in chunks of ADD_CHUNK sent together: Redis runs one
   * chunk's adds while the client encodes the next (one pipeline of a whole bulk start would
   * leave Redis idle until its last job is encoded, then the client idle while Redis works).
   */
  override async addBulk(jobs: readonly StepJob[]): Promise<void> {
    const byQueue = new Map<string, StepJob[]>();
    for (const job of jobs) {
      const group = byQueue.get(job.queue) ?? [];
      group.push(job);
      byQueue.set(job.queue, group);
    }
    const adds: Array<Promise<unknown>> = [];
    for (const [queue, group] of byQueue) {
      const target = this.queues.queue(queue);
      for (let start = 0; start < group.length; start += ADD_CHUNK)
        adds.push(target.addBulk(group.slice(start, start + ADD_CHUNK).map(bullmqJob)));
    }
    await Promise.all(adds);
  }

  async jobPresence(
    queue: string,
    jobIds: readonly string[],
  ): Promise<Map<string, StepJobPresence>> {
    const target = this.queues.queue(queue);
    const presence = new Map<string, StepJobPresence>();
    for (let start = 0; start < jobIds.length; start += PRESENCE_CHUNK) {
      const chunk = jobIds.slice(start, start + PRESENCE_CHUNK);
      const states = await Promise.all(chunk.map((jobId) => target.getJobState(jobId)));
      chunk.forEach((jobId, index) => {
        const state = states[index];
        presence.set(
          jobId,
          state === 'unknown'
            ? 'missing'
            : state === 'completed' || state === 'failed'
              ? 'finished'
              : 'pending',
        );
      });
    }
    return presence;
  }

  /**
   * The workers the transport sees on each consumed queue: one round trip per queue on the
   * queue's own connection (BullMQ's public API, whatever its backend), so it also proves the
   * transport answers.
   */
  async transportStatus(): Promise<QueueTransportStatus[]> {
    return Promise.all(
      Object.keys(this.options.queues).map(async (name) => ({
        queue: name,
        workers: await this.queues.queue(name).getWorkersCount(),
      })),
    );
  }

  /** Per consumed queue, one `getJobCounts` round trip; prioritized jobs count as waiting. */
  async jobCounts(): Promise<QueueJobCounts[]> {
    return Promise.all(
      Object.keys(this.options.queues).map(async (name) => {
        const counts = await this.queues
          .queue(name)
          .getJobCounts('waiting', 'prioritized', 'delayed', 'active');
        return {
          queue: name,
          waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
          delayed: counts.delayed ?? 0,
          active: counts.active ?? 0,
        };
      }),
    );
  }
}

/** A step job as BullMQ takes it. */
function bullmqJob(job: StepJob) {
  return {
    name: job.kind === 'expireWait' ? EXPIRE_WAIT_JOB_NAME : PERFORM_STEP_JOB_NAME,
    data: stepJobData(job),
    opts: {
      jobId: job.jobId,
      delay: job.delay,
      priority: job.priority,
      removeOnComplete: { age: 86_400, count: 10_000 },
      removeOnFail: { age: 604_800 },
    },
  };
}
