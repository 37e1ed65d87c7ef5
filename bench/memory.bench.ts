/**
 * `npm run bench:memory`: what parked work costs a worker. A worker process (forked, the
 * deployment's only consumer) is measured with no parked workflow and with BENCH_PARKED parked
 * ones (default 100k, waiting for a signal): its RSS and used heap after a full GC, and the Redis
 * keys under the deployment's prefix. Before each measurement the worker runs the same exercise
 * (workflows parked, signaled and finished through it), so both states are equally warm. Of the
 * parked workflows, 200 are parked through the engine; the rest are row copies of one of them
 * (bulk SQL), and 100 copies are woken afterwards to prove they are real. One JSON line, medians
 * over BENCH_RUNS runs (default 3); parked work should cost no memory, no live job and no Redis
 * key beyond BullMQ's record of completed jobs.
 */
import type { EngineHarness } from '../test/e2e/support/engine-harness';
import { createOrders } from './support/dataset';
import { DeploymentParkedWorkflow, DEPLOYMENT_WORKFLOWS } from './support/deployment.workflows';
import { bootEngine } from './support/engine';
import { envInteger, runCount } from './support/env';
import { FinishLine } from './support/finish-line';
import { ForkedWorker } from './support/forked-worker';
import { runBenchmark } from './support/main';
import { mapInParallel } from './support/parallel';
import { cloneParkedWorkflow, deleteParkedWorkflows, waitForParked } from './support/parked';
import { countKeys, withRedis } from './support/redis';
import { emit, repeatRuns } from './support/result';
import { round } from './support/stats';

const PARKED = envInteger('BENCH_PARKED', 100_000);
const ENGINE_PARKED = Math.min(200, PARKED);
const EXERCISED = 100;
const WOKEN_COPIES = Math.min(100, PARKED - ENGINE_PARKED);
const MB = 1024 * 1024;

/** Parks `count` workflows through the engine; resolves their ids once all are parked. */
async function park(
  harness: EngineHarness,
  count: number,
  parkedBefore: number,
): Promise<string[]> {
  const heroes = await createOrders(harness.dataSource, count);
  const started = await mapInParallel(heroes, 20, (hero) =>
    harness.service.start(DeploymentParkedWorkflow, { hero }),
  );
  await waitForParked(harness, parkedBefore + count);
  return started.map(({ id }) => id);
}

/** Signals `ids` and waits until the worker has finished them all. */
async function wake(harness: EngineHarness, finishLine: FinishLine, ids: string[]): Promise<void> {
  const finished = finishLine.expect(ids);
  await mapInParallel(ids, 20, (id) => harness.service.signal(id, 'go'));
  await finished;
}

/** The worker's footprint and the deployment's Redis keys, after the worker ran the exercise. */
async function footprint(
  harness: EngineHarness,
  finishLine: FinishLine,
  worker: ForkedWorker,
  parked: number,
) {
  await wake(harness, finishLine, await park(harness, EXERCISED, parked));
  const { rss, heapUsed } = await worker.memory();
  const jobs = await harness
    .queue()
    .getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed');
  return {
    rssMb: rss / MB,
    heapUsedMb: heapUsed / MB,
    redisKeys: await withRedis((client) => countKeys(client, harness.prefix)),
    liveJobs: jobs.waiting + jobs.active + jobs.delayed + jobs.prioritized + jobs.paused,
    completedJobs: jobs.completed,
  };
}

runBenchmark(async () => {
  const harness = await bootEngine({ workflows: DEPLOYMENT_WORKFLOWS, worker: false });
  const finishLine = new FinishLine();
  const worker = await ForkedWorker.start({
    schema: harness.schema,
    prefix: harness.prefix,
    concurrency: 10,
    steps: 1,
    onFinished: (id) => finishLine.finished(id),
  });
  try {
    // Unmeasured: boot garbage collected and code paths warm before the first footprint.
    await footprint(harness, finishLine, worker, 0);
    const runs = await repeatRuns(runCount(), async () => {
      const none = await footprint(harness, finishLine, worker, 0);
      const [template] = await park(harness, ENGINE_PARKED, 0);
      const copies = await cloneParkedWorkflow(harness, template, PARKED - ENGINE_PARKED);
      await waitForParked(harness, PARKED);
      const parked = await footprint(harness, finishLine, worker, PARKED);
      await wake(harness, finishLine, copies.slice(0, WOKEN_COPIES));
      await deleteParkedWorkflows(harness);
      return {
        rssNoneMb: round(none.rssMb, 1),
        rssParkedMb: round(parked.rssMb, 1),
        rssDeltaMb: round(parked.rssMb - none.rssMb, 1),
        heapUsedNoneMb: round(none.heapUsedMb, 1),
        heapUsedParkedMb: round(parked.heapUsedMb, 1),
        heapUsedDeltaMb: round(parked.heapUsedMb - none.heapUsedMb, 1),
        redisKeysNone: none.redisKeys,
        redisKeysParked: parked.redisKeys,
        redisKeysBeyondCompletedJobs:
          parked.redisKeys - none.redisKeys - (parked.completedJobs - none.completedJobs),
        liveJobsParked: parked.liveJobs,
      };
    });
    await emit(
      'memory',
      {
        parked: PARKED,
        parkedThroughEngine: ENGINE_PARKED,
        exercised: EXERCISED,
        wokenCopies: WOKEN_COPIES,
      },
      runs,
    );
  } finally {
    await worker.stop();
    await harness.close();
  }
});
