/**
 * `npm run bench:start-many`: workflows started per second with `startMany()` (BENCH_START_MANY
 * workflows, default 10,000, in calls of BENCH_START_MANY_BATCH, default 1,000) against a loop of
 * `start()` (BENCH_START_LOOP, default 1,000, one after the other), on a real app (PostgreSQL +
 * BullMQ, no worker: only the starts and their enqueues are measured). Every workflow has its own
 * hero, so the one-ongoing-per-hero checks run. One JSON line: both rates and their ratio (target
 * ≥ 20×), medians over BENCH_RUNS runs (default 3).
 * Beside them, the CPU the bulk starts took per 1,000 workflows (this process, its PostgreSQL
 * backends, Redis) and `ratioBound`, the ratio were the library's own work free: a call's
 * PostgreSQL transaction commits before its jobs go to Redis, and the calls follow each other, so
 * no bulk start doing these writes and these enqueues can take less than the backends' CPU plus
 * Redis's.
 */
import { performance } from 'node:perf_hooks';
import { chainWorkflow } from './support/bench.workflows';
import { createOrders } from './support/dataset';
import { startCpuMeter } from './support/cpu-meter';
import { bootEngine } from './support/engine';
import { envInteger, runCount } from './support/env';
import { runBenchmark } from './support/main';
import { emit, repeatRuns } from './support/result';

const BULK = envInteger('BENCH_START_MANY', 10_000);
const BATCH = envInteger('BENCH_START_MANY_BATCH', 1_000);
const LOOP = envInteger('BENCH_START_LOOP', 1_000);
const StartManyWorkflow = chainWorkflow('StartManyBenchWorkflow', 2, null);

runBenchmark(async () => {
  const harness = await bootEngine({ workflows: [StartManyWorkflow], worker: false });
  try {
    const service = harness.service;
    const loop = async (count: number) => {
      const heroes = await createOrders(harness.dataSource, count);
      const started = performance.now();
      for (const hero of heroes) await service.start(StartManyWorkflow, { hero });
      return count / ((performance.now() - started) / 1000);
    };
    const bulk = async (count: number, batch: number) => {
      const heroes = await createOrders(harness.dataSource, count);
      const cpuSpent = await startCpuMeter(harness.dataSource);
      const started = performance.now();
      for (let i = 0; i < heroes.length; i += batch) {
        const created = await service.startMany(
          StartManyWorkflow,
          heroes.slice(i, i + batch).map((hero) => ({ hero })),
        );
        if (created.some((row) => row === null)) throw new Error('startMany left a workflow out');
      }
      const perSecond = count / ((performance.now() - started) / 1000);
      const cpu = await cpuSpent();
      const per1000 = (ms: number) => Math.round((ms / count) * 1000 * 10) / 10;
      return {
        perSecond,
        workerCpuMsPer1000: per1000(cpu.workerMs),
        databaseCpuMsPer1000: per1000(cpu.postgresOwnMs),
        redisCpuMsPer1000: per1000(cpu.redisMs),
        boundPerSecond: count / ((cpu.postgresOwnMs + cpu.redisMs) / 1000),
      };
    };
    // Unmeasured, a round of each at the measured size: JIT warm-up and the pool's first
    // connections stay out (the start() loop still ran 1.6x faster in its third run than its first
    // after a warm-up of 100 starts).
    await loop(LOOP);
    await bulk(BULK, BATCH);
    const runs = await repeatRuns(runCount(), async () => {
      const startPerSecond = await loop(LOOP);
      const { perSecond, boundPerSecond, ...cpu } = await bulk(BULK, BATCH);
      return {
        startPerSecond: Math.round(startPerSecond),
        startManyPerSecond: Math.round(perSecond),
        ratio: Math.round((perSecond / startPerSecond) * 10) / 10,
        ...cpu,
        ratioBound: Math.round((boundPerSecond / startPerSecond) * 10) / 10,
      };
    });
    const result = await emit(
      'start-many',
      { startMany: BULK, batch: BATCH, startLoop: LOOP },
      runs,
    );
    process.stderr.write(
      `start-many: ${result.metrics.startManyPerSecond}/s with startMany vs ${result.metrics.startPerSecond}/s with start(): ${result.metrics.ratio}× (target ≥ 20×; at most ${result.metrics.ratioBound}× with the library's own work free)\n`,
    );
  } finally {
    await harness.close();
  }
});
