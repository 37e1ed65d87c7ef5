import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { Worker } from 'bullmq';
import { InjectResolvedOptions } from '../../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../../options/resolved-options.interface';
import { ShutdownSignal } from '../../resumable/shutdown.signal';
import { WorkflowRegistry } from '../../discovery/workflow.registry';
import { StepProcessor } from './step.processor';
import { untilReady } from './until-ready';
import { warnAboutUnconsumedQueues } from '../../queue/unconsumed-queues';
import { TransportOutage } from '../../queue/transport-outage';

/** How long a `worker: false` boot waits for its idle workers to close. */
const IDLE_CLOSE_PATIENCE_MS = 2_000;

/**
 * Starts the library's BullMQ workers at bootstrap (they are created with `autorun: false`, so
 * a `worker: false` process never consumes) and closes them in `beforeApplicationShutdown`,
 * waiting for in-flight steps before `@nestjs/typeorm` destroys the DataSource. A `worker: false`
 * process closes its idle workers at bootstrap instead: an unstarted BullMQ worker still holds its
 * Redis connections and counts among the workers Redis reports (`getWorkersCount()`), which the
 * health indicator and `geneva-drive doctor` read as "a process consumes this queue".
 */
@Injectable()
export class WorkerLifecycleService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('GenevaDrive');

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly shutdown: ShutdownSignal,
    private readonly registry: WorkflowRegistry,
    private readonly outage: TransportOutage,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (!this.options.worker) {
      // Bounded: a worker whose Redis does not answer must not hold up the boot.
      await Promise.all(
        this.workers().map((worker) => closeWithin(worker, IDLE_CLOSE_PATIENCE_MS)),
      );
      return;
    }
    warnAboutUnconsumedQueues(
      this.registry.all(),
      Object.keys(this.options.queues),
      this.options.defaultQueue,
      this.options.logger ?? this.logger,
    );
    for (const worker of this.workers()) {
      // Told once per outage, not at every reconnect attempt (BullMQ prints unheard errors).
      worker.on('error', (error: Error) => void this.outage.failed(error));
      worker.run().catch((error: unknown) => {
        this.logger.error(`BullMQ worker for queue '${worker.name}' stopped: ${String(error)}`);
      });
    }
  }

  async beforeApplicationShutdown(): Promise<void> {
    // Resumable steps stop at their next checkpoint; a successor continues after the restart.
    this.shutdown.raise();
    await Promise.all(this.workers().map((worker) => closeWhenReady(worker)));
  }

  private workers(): Worker[] {
    return this.discovery
      .getProviders()
      .map((wrapper) => wrapper.instance as unknown)
      .filter((instance): instance is StepProcessor => instance instanceof StepProcessor)
      .map((processor) => workerOf(processor))
      .filter((worker): worker is Worker => worker !== null);
  }
}

/**
 * Closes `worker` once its connections are up (at most 2 s): BullMQ 5 closing a connection still
 * being established (an app closed right after its boot) emits an `error` nobody can listen to any
 * more, which throws in the process.
 */
async function closeWhenReady(worker: Worker): Promise<void> {
  await untilReady(worker);
  await worker.close();
}

/** Closes `worker` as `closeWhenReady` does, waiting at most `ms` (past that, in the background). */
async function closeWithin(worker: Worker, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    closeWhenReady(worker).catch(() => undefined),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]);
  clearTimeout(timer);
}

/** The processor's worker; null when boot failed before `@nestjs/bullmq` created it. */
function workerOf(processor: StepProcessor): Worker | null {
  try {
    return processor.worker;
  } catch {
    return null;
  }
}
