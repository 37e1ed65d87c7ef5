import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Queue, Worker, type Job } from 'bullmq';
import { FinishLine } from './finish-line';
import { REDIS_CONNECTION } from './redis';
import type { StepTimeline } from './step-timeline';

interface ChainJob {
  chain: string;
  step: number;
}

/** The engine's own job options (`BullmqStepJobQueue`), so both pay the same Redis bookkeeping. */
const JOB_OPTIONS = {
  removeOnComplete: { age: 86_400, count: 10_000 },
  removeOnFail: { age: 604_800 },
};

export interface BullmqChainsOptions {
  chains: number;
  steps: number;
  concurrency: number;
  timeline: StepTimeline;
}

/**
 * The transport's own limit: `chains` chains of `steps` raw BullMQ jobs on a fresh prefix, each
 * job enqueuing the next (what the engine does after each step, minus the SQL), consumed by one
 * worker of `concurrency`. The first jobs are added while the queue is paused; resolves the
 * milliseconds from the resume to the last chain's last job completing.
 */
export async function runBullmqChains(options: BullmqChainsOptions): Promise<number> {
  const prefix = `gd-bench-floor-${randomBytes(4).toString('hex')}`;
  const queue = new Queue<ChainJob>('floor', { connection: REDIS_CONNECTION, prefix });
  const finishLine = new FinishLine();
  const worker = new Worker<ChainJob>(
    'floor',
    async (job: Job<ChainJob>) => {
      const startedAt = performance.now();
      const { chain, step } = job.data;
      options.timeline.record(chain, step, startedAt, performance.now());
      if (step + 1 < options.steps) {
        await queue.add(
          'step',
          { chain, step: step + 1 },
          { ...JOB_OPTIONS, jobId: `${chain}-${step + 1}` },
        );
      }
    },
    { connection: REDIS_CONNECTION, prefix, concurrency: options.concurrency, autorun: false },
  );
  worker.on('completed', (job: Job<ChainJob>) => {
    if (job.data.step === options.steps - 1) finishLine.finished(job.data.chain);
  });
  await Promise.all([queue.waitUntilReady(), worker.waitUntilReady()]);
  await queue.pause();
  const running = worker.run();
  try {
    const chains = Array.from({ length: options.chains }, (_, index) => `chain${index}`);
    await queue.addBulk(
      chains.map((chain) => ({
        name: 'step',
        data: { chain, step: 0 },
        opts: { ...JOB_OPTIONS, jobId: `${chain}-0` },
      })),
    );
    const finished = finishLine.expect(chains);
    const resumedAt = performance.now();
    await queue.resume();
    return (await finished) - resumedAt;
  } finally {
    await worker.close();
    await running;
    await queue.obliterate({ force: true });
    await queue.close();
  }
}
