import type { JobsOptions } from 'bullmq';
import { BullmqStepJobQueue } from '../../../lib/adapters/bullmq/bullmq-step-job.queue';
import {
  BullmqQueueSource,
  type BullmqQueueHandle,
} from '../../../lib/adapters/bullmq/bullmq-queue.source';
import { ErrorReportingService } from '../../../lib/observability/error-reporting.service';
import type { ResolvedGenevaDriveOptions } from '../../../lib/options/resolved-options.interface';
import type { StepJob, StepJobData } from '../../../lib/queue/step-job.interface';
import { TransportOutage } from '../../../lib/queue/transport-outage';
import { Deferred } from '../state-machine/support/deferred';

type BulkEntry = { name: string; data: StepJobData; opts?: JobsOptions };

/** Queues whose `addBulk` calls are recorded and finish only when the test says so. */
class HeldQueues extends BullmqQueueSource {
  readonly calls: Array<{ queue: string; jobIds: string[] }> = [];
  readonly release = new Deferred();

  queue(name: string): BullmqQueueHandle {
    return {
      addBulk: async (jobs: BulkEntry[]) => {
        this.calls.push({ queue: name, jobIds: jobs.map((job) => String(job.opts?.jobId)) });
        await this.release.promise;
      },
    } as Partial<BullmqQueueHandle> as BullmqQueueHandle;
  }

  consumedQueues(): BullmqQueueHandle[] {
    return [];
  }
}

function jobs(queue: string, count: number): StepJob[] {
  return Array.from({ length: count }, (_, index) => ({
    jobId: `${queue}-${index}`,
    stepExecutionId: `${queue}-${index}`,
    workflowId: `w-${index}`,
    queue,
    delay: 0,
  }));
}

describe('BullmqStepJobQueue.addBulk', () => {
  it('sends each queue its jobs in order, in chunks of 100 all sent before any finishes', async () => {
    const queues = new HeldQueues();
    const options = {} as ResolvedGenevaDriveOptions;
    const errors = new ErrorReportingService(options);
    const queue = new BullmqStepJobQueue(queues, new TransportOutage(errors, options), options);
    const a = jobs('a', 250);
    const b = jobs('b', 30);
    const adding = queue.addBulk([...a.slice(0, 120), ...b, ...a.slice(120)]);
    await new Promise((resolve) => setImmediate(resolve));

    expect(queues.calls.map((call) => [call.queue, call.jobIds.length])).toEqual([
      ['a', 100],
      ['a', 100],
      ['a', 50],
      ['b', 30],
    ]);
    const sent = (name: string) =>
      queues.calls.filter((call) => call.queue === name).flatMap((call) => call.jobIds);
    expect(sent('a')).toEqual(a.map((job) => job.jobId));
    expect(sent('b')).toEqual(b.map((job) => job.jobId));

    queues.release.resolve();
    await expect(adding).resolves.toBeUndefined();
  });
});
