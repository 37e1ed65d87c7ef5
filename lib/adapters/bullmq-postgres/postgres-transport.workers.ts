import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { Worker, type Job } from 'bullmq';
import { WorkflowRegistry } from '../../discovery/workflow.registry';
import { InjectResolvedOptions } from '../../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../../options/resolved-options.interface';
import type { StepJobData } from '../../queue/step-job.interface';
import { TransportOutage } from '../../queue/transport-outage';
import { warnAboutUnconsumedQueues } from '../../queue/unconsumed-queues';
import { ShutdownSignal } from '../../resumable/shutdown.signal';
import { WorkflowRunner } from '../../runner/workflow.runner';
import { handleStepJob } from '../bullmq/step-job.handler';
import { untilReady } from '../bullmq/until-ready';
import { PostgresQueueSource } from './postgres-queue.source';

/**
 * How long a worker waits before fetching again after a connection error (BullMQ's default is
 * 15 s). On Redis, ioredis holds commands while it reconnects, so a fetch rarely sees one; on
 * PostgreSQL every fetch during a server restart fails to connect (ECONNREFUSED), and with the
 * default an idle worker took new jobs only ~13 s after a 1.5 s restart. One connect attempt a
 * second while PostgreSQL is down costs nothing. (`runRetryDelay` is a typed Worker option that
 * BullMQ's docs call internal; a BullMQ without it would only bring the 15 s back.)
 */
const CONNECTION_RETRY_DELAY_MS = 1_000;

/**
 * The BullMQ workers of `transport: 'postgres'`, one per consumed queue, started at bootstrap
 * (none with `worker: false`). At shutdown the workers finish their in-flight steps before the
 * queues close, and both before `@nestjs/typeorm` destroys the DataSource.
 */
@Injectable()
export class PostgresTransportWorkers implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly defaultLogger = new Logger('GenevaDrive');
  private readonly workers: Array<Pick<Worker, 'close' | 'waitUntilReady'>> = [];

  constructor(
    private readonly queues: PostgresQueueSource,
    private readonly runner: WorkflowRunner,
    private readonly registry: WorkflowRegistry,
    private readonly shutdown: ShutdownSignal,
    private readonly outage: TransportOutage,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // Refuses a BullMQ without the backend, or a data source that is not PostgreSQL, at boot.
    void this.queues.backend;
    void this.queues.connection;
    if (!this.options.worker) return;
    warnAboutUnconsumedQueues(
      this.registry.all(),
      Object.keys(this.options.queues),
      this.options.defaultQueue,
      this.logger,
    );
    for (const [name, { concurrency }] of Object.entries(this.options.queues)) {
      const worker = new Worker(
        name,
        // Every job on the library's queues carries StepJobData (BullmqStepJobQueue adds them).
        (job: Job) => handleStepJob(this.runner, job as Job<StepJobData>),
        {
          connection: this.queues.connection,
          concurrency,
          autorun: false,
          runRetryDelay: CONNECTION_RETRY_DELAY_MS,
        },
        this.queues.backend,
      );
      worker.on('error', (error: Error) => void this.outage.failed(error));
      worker.run().catch((error: unknown) => {
        this.logger.error(`BullMQ worker for queue '${name}' stopped: ${String(error)}`);
      });
      this.workers.push(worker);
    }
    // A worker is seen (getWorkersCount, the health indicator) once its LISTEN session is named,
    // which waitUntilReady does: wait for that, a bounded moment, so boot ends with it counted.
    await Promise.all(this.workers.map((worker) => untilReady(worker)));
  }

  async beforeApplicationShutdown(): Promise<void> {
    // Resumable steps stop at their next checkpoint; a successor continues after the restart.
    this.shutdown.raise();
    await Promise.all(this.workers.splice(0).map((worker) => worker.close()));
    await this.queues.close();
  }

  private get logger() {
    return this.options.logger ?? this.defaultLogger;
  }
}
