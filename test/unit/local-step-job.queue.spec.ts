import type { ModuleRef } from '@nestjs/core';
import { LocalStepJobQueue } from '../../lib/adapters/local/local-step-job.queue';
import type { ResolvedGenevaDriveOptions } from '../../lib/options/resolved-options.interface';
import type { StepJob, StepJobData } from '../../lib/queue/step-job.interface';
import { ShutdownSignal } from '../../lib/resumable/shutdown.signal';
import type { JobSlot } from '../../lib/runner/step-chain';

/** A runner whose steps end when the test says so, recording the order they started in. */
class HeldRunner {
  readonly started: string[] = [];
  readonly slots: JobSlot[] = [];
  private readonly releases = new Map<string, () => void>();

  performJob(data: StepJobData, slot: JobSlot): Promise<void> {
    this.started.push(data.stepExecutionId);
    this.slots.push(slot);
    return new Promise((resolve) => this.releases.set(data.stepExecutionId, resolve));
  }

  expireWait(data: StepJobData): Promise<void> {
    return this.performJob(
      { stepExecutionId: `timeout:${data.stepExecutionId}` },
      { queue: '', priority: undefined },
    );
  }

  release(id: string): void {
    this.releases.get(id)?.();
  }
}

const job = (id: string, extra: Partial<StepJob> = {}): StepJob => ({
  jobId: id,
  stepExecutionId: id,
  workflowId: `workflow-of-${id}`,
  queue: 'geneva-drive',
  delay: 0,
  ...extra,
});

/** Lets the queue's promise callbacks (a finished job freeing its slot) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('LocalStepJobQueue', () => {
  let runner: HeldRunner;
  let queue: LocalStepJobQueue;

  beforeEach(() => {
    runner = new HeldRunner();
    const moduleRef = { get: () => runner } as unknown as ModuleRef;
    const options = {
      queues: { 'geneva-drive': { concurrency: 1 } },
    } as unknown as ResolvedGenevaDriveOptions;
    queue = new LocalStepJobQueue(moduleRef, new ShutdownSignal(), options);
  });

  afterEach(async () => {
    const closing = queue.beforeApplicationShutdown();
    for (const id of runner.started) runner.release(id);
    await closing;
  });

  it('holds jobs until started, then runs them as BullMQ orders them: unprioritized first, then by priority', async () => {
    await queue.add(job('p5', { priority: 5 }));
    await queue.add(job('plain-1'));
    await queue.add(job('p1', { priority: 1 }));
    await queue.add(job('plain-2'));
    expect(runner.started).toEqual([]);

    queue.start();
    for (const id of ['plain-1', 'plain-2', 'p1', 'p5']) {
      expect(runner.started.at(-1)).toBe(id);
      runner.release(id);
      await settle();
    }
    expect(runner.slots.map((slot) => slot.priority)).toEqual([undefined, undefined, 1, 5]);
  });

  it('ignores an id it holds or has finished, and reports presence like BullMQ', async () => {
    queue.start();
    await queue.add(job('a'));
    await queue.add(job('a'));
    await queue.add(job('b'));
    expect(runner.started).toEqual(['a']);
    expect(await queue.jobPresence('geneva-drive', ['a', 'b', 'c'])).toEqual(
      new Map([
        ['a', 'pending'],
        ['b', 'pending'],
        ['c', 'missing'],
      ]),
    );
    runner.release('a');
    await settle();
    await queue.add(job('a'));
    expect(runner.started).toEqual(['a', 'b']);
    expect((await queue.jobPresence('geneva-drive', ['a'])).get('a')).toBe('finished');
  });

  it('runs a wait timeout through expireWait, and a queue not in the options one job at a time', async () => {
    queue.start();
    await queue.add(job('x', { kind: 'expireWait', queue: 'elsewhere' }));
    await queue.add(job('y', { queue: 'elsewhere' }));
    expect(runner.started).toEqual(['timeout:x']);
  });

  it('at shutdown waits for running steps and drops delayed ones', async () => {
    queue.start();
    await queue.add(job('running'));
    await queue.add(job('later', { delay: 60_000 }));
    let closed = false;
    const closing = queue.beforeApplicationShutdown().then(() => (closed = true));
    await settle();
    expect(closed).toBe(false);
    runner.release('running');
    await closing;
    expect(runner.started).toEqual(['running']);
    expect(await queue.transportStatus()).toEqual([{ queue: 'geneva-drive', workers: 0 }]);
  });
});
