import { Injectable } from '@nestjs/common';
import { withTimeout } from '../common/with-timeout';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { isStepJobTransportProbe } from '../queue/step-job-transport-probe';
import { StepJobQueue } from '../queue/step-job.queue';
import type { QueuesOverview } from './dashboard-timeline.interface';

/** How long the transport gets to answer before the page says it did not. */
const ANSWER_TIMEOUT_MS = 2_000;

/** The queues page: each registered queue's jobs by state and the workers the transport sees. */
@Injectable()
export class DashboardQueuesReader {
  constructor(
    private readonly queue: StepJobQueue,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  async read(): Promise<QueuesOverview> {
    const queue = this.queue;
    if (!isStepJobTransportProbe(queue)) {
      return { transport: 'in-process', problem: null, queues: [] };
    }
    const transport = this.options.transport;
    try {
      const [status, counts] = await withTimeout(
        Promise.all([queue.transportStatus(), queue.jobCounts()]),
        ANSWER_TIMEOUT_MS,
        `the transport did not answer within ${ANSWER_TIMEOUT_MS} ms`,
      );
      const workers = new Map(status.map((entry) => [entry.queue, entry.workers]));
      return {
        transport,
        problem: null,
        queues: counts.map((entry) => ({ ...entry, workers: workers.get(entry.queue) ?? 0 })),
      };
    } catch (error) {
      return {
        transport,
        problem: error instanceof Error ? error.message : String(error),
        queues: [],
      };
    }
  }
}
