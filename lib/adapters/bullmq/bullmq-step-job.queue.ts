import { getQueueToken } from '@nestjs/bullmq';
import { Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Queue, type ConnectionOptions } from 'bullmq';
import { EXPIRE_WAIT_JOB_NAME, PERFORM_STEP_JOB_NAME } from '../../common/constants';
import { InjectResolvedOptions } from '../../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../../options/resolved-options.interface';
import type { StepJob, StepJobData } from '../../queue/step-job.interface';
import type { StepJobInspector, StepJobPresence } from '../../queue/step-job-inspector';
import type {
  QueueJobCounts,
  QueueTransportStatus,
  StepJobTransportProbe,
} from '../../queue/step-job-transport-probe';
import { StepJobQueue } from '../../queue/step-job.queue';
import { TransportOutage } from '../../queue/transport-outage';

/** Job-state lookups sent to Redis at once (ioredis pipelines concurrent commands). */
const PRESENCE_CHUNK = 200;

/**
 * Step jobs on BullMQ. Queues this process registered come from `@nestjs/bullmq`; queues it only
 * produces to (a step's `jobOptions.queue`) are created lazily and closed at shutdown. Job states
 * can be looked up (`StepJobInspector`) for the reconciliation of scheduled executions.
 */
@Injectable()
export class BullmqStepJobQueue
  extends StepJobQueue
  implements StepJobInspector, StepJobTransportProbe, OnModuleInit, BeforeApplicationShutdown
{
  private readonly producedOnly = new Map<string, Queue>();

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly outage: TransportOutage,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {
    super();
  }

  /**
   * Listens to the registered queues' connection errors: without a listener BullMQ prints every
   * reconnect attempt of an unreachable Redis; with it, the outage is told once.
   */
  onModuleInit(): void {
    for (const name of Object.keys(this.options.queues)) this.watch(this.registeredQueue(name));
  }

  async add(job: StepJob): Promise<void> {
    const { name, data, opts } = bullmqJob(job);
    await this.queueNamed(job.queue).add(name, data, opts);
  }

  /** One `addBulk` (one Redis round trip, atomic) per queue the jobs go to. */
  override async addBulk(jobs: readonly StepJob[]): Promise<void> {
    const byQueue = new Map<string, StepJob[]>();
    for (const job of jobs) {
      const group = byQueue.get(job.queue) ?? [];
      group.push(job);
      byQueue.set(job.queue, group);
    }
    for (const [queue, group] of byQueue) {
      await this.queueNamed(queue).addBulk(group.map(bullmqJob));
    }
  }

  async jobPresence(
    queue: string,
    jobIds: readonly string[],
  ): Promise<Map<string, StepJobPresence>> {
    const target = this.queueNamed(queue);
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
   * The workers the transport sees on each registered queue: one round trip per queue on the
   * queue's own connection (BullMQ's public API, whatever its backend), so it also proves the
   * transport answers.
   */
  async transportStatus(): Promise<QueueTransportStatus[]> {
    return Promise.all(
      Object.keys(this.options.queues).map(async (name) => ({
        queue: name,
        workers: await this.queueNamed(name).getWorkersCount(),
      })),
    );
  }

  /** Per registered queue, one `getJobCounts` round trip; prioritized jobs count as waiting. */
  async jobCounts(): Promise<QueueJobCounts[]> {
    return Promise.all(
      Object.keys(this.options.queues).map(async (name) => {
        const counts = await this.queueNamed(name).getJobCounts(
          'waiting',
          'prioritized',
          'delayed',
          'active',
        );
        return {
          queue: name,
          waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
          delayed: counts.delayed ?? 0,
          active: counts.active ?? 0,
        };
      }),
    );
  }

  async beforeApplicationShutdown(): Promise<void> {
    // A BullMQ queue closed while its Redis connection is still being established (an app whose
    // boot failed at once, a queue first used just before shutdown) emits an `error` nobody can
    // listen to any more, which throws; so give each a moment to connect first. `@nestjs/bullmq`
    // closes the registered queues next.
    await Promise.all(
      [...this.producedOnly.values()].map(async (queue) => {
        await untilReady(queue);
        await queue.close();
      }),
    );
    this.producedOnly.clear();
    await Promise.all(
      Object.keys(this.options.queues).map((name) => untilReady(this.registeredQueue(name))),
    );
  }

  private watch(queue: Queue | null): void {
    queue?.on('error', (error: Error) => void this.outage.failed(error));
  }

  private registeredQueue(name: string): Queue | null {
    try {
      return this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
    } catch {
      return null;
    }
  }

  private queueNamed(name: string): Queue {
    if (name in this.options.queues) {
      return this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
    }
    let queue = this.producedOnly.get(name);
    if (!queue) {
      queue = new Queue(name, {
        // BullMQ 5's ConnectionOptions needs the assertion; BullMQ 6's takes the object as it is.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
        connection: this.options.connection as ConnectionOptions,
        prefix: this.options.prefix,
      });
      this.watch(queue);
      this.producedOnly.set(name, queue);
    }
    return queue;
  }
}

/** A step job as BullMQ takes it. */
function bullmqJob(job: StepJob) {
  return {
    name: job.kind === 'expireWait' ? EXPIRE_WAIT_JOB_NAME : PERFORM_STEP_JOB_NAME,
    data: {
      stepExecutionId: job.stepExecutionId,
      workflowId: job.workflowId,
    } satisfies StepJobData,
    opts: {
      jobId: job.jobId,
      delay: job.delay,
      priority: job.priority,
      removeOnComplete: { age: 86_400, count: 10_000 },
      removeOnFail: { age: 604_800 },
    },
  };
}

/** Resolves once the queue's connection is ready, or after at most 2 s (Redis unreachable). */
async function untilReady(queue: Queue | null): Promise<void> {
  if (!queue) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    queue.waitUntilReady().then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, 2_000))),
  ]);
  clearTimeout(timer);
}
