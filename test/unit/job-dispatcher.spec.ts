import { JobDispatcher } from '../../lib/queue/job-dispatcher';
import type { StepJob } from '../../lib/queue/step-job.interface';
import { StepJobQueue } from '../../lib/queue/step-job.queue';
import { TransportOutage } from '../../lib/queue/transport-outage';
import { ErrorReportingService } from '../../lib/observability/error-reporting.service';
import type { ResolvedGenevaDriveOptions } from '../../lib/options/resolved-options.interface';
import { Deferred } from './state-machine/support/deferred';

/** A queue whose adds finish only when the test says so. */
class HeldQueue extends StepJobQueue {
  readonly added: StepJob[] = [];
  readonly release = new Deferred();

  async add(job: StepJob): Promise<void> {
    this.added.push(job);
    await this.release.promise;
  }
}

const JOB: StepJob = {
  jobId: 'e-1',
  stepExecutionId: 'e-1',
  workflowId: 'w-1',
  queue: 'geneva-drive',
  delay: 0,
};

function dispatcherOn(queue: StepJobQueue): JobDispatcher {
  const options = { enqueueAfterCommit: true } as ResolvedGenevaDriveOptions;
  const errors = new ErrorReportingService(options);
  return new JobDispatcher(queue, new TransportOutage(errors, options), errors, options);
}

/** Whether `promise` has settled by the time everything already queued has run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe('JobDispatcher', () => {
  it('committed() resolves once the jobs reached the queue', async () => {
    const queue = new HeldQueue();
    const committing = dispatcherOn(queue).committed([JOB], []);
    expect(await settled(committing)).toBe(false);
    queue.release.resolve();
    await committing;
    expect(queue.added).toEqual([JOB]);
  });

  it('handOver() runs the after-commit work at once, enqueues from the next turn of the event loop without the caller waiting; shutdown waits for it', async () => {
    const queue = new HeldQueue();
    const dispatcher = dispatcherOn(queue);
    const order: string[] = [];
    dispatcher.handOver([JOB], [() => order.push('after-commit')]);
    order.push('returned');
    expect(order).toEqual(['after-commit', 'returned']);
    // The caller's continuation (its awaits on settled promises) comes before the enqueue.
    await Promise.resolve();
    expect(queue.added).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(queue.added).toEqual([JOB]);

    const shutdown = dispatcher.onModuleDestroy();
    expect(await settled(shutdown)).toBe(false);
    queue.release.resolve();
    await shutdown;
  });

  it('shutdown with nothing handed over resolves at once', async () => {
    const dispatcher = dispatcherOn(new HeldQueue());
    dispatcher.handOver([], []);
    expect(await settled(dispatcher.onModuleDestroy())).toBe(true);
  });
});
