/**
 * `npm run bench:transports`: what the transport costs, side by side in one run: `'redis'`
 * (BullMQ on Redis), `'postgres'` (BullMQ on its PostgreSQL backend, in the bench's database) and
 * `'local'` (in process). For each, on a real app with a fresh schema and prefix: the latency
 * from `start()` to the first step's body and from `signal()` to the woken body (BENCH_SAMPLES
 * one at a time, default 100), and workflows per second for BENCH_WORKFLOWS three-step workflows
 * started at once (default 200; their later steps chain in process). One JSON line: each
 * transport's figures, and postgres and local as ratios of redis. BENCH_TRANSPORTS=redis,postgres
 * measures a subset.
 */
import { performance } from 'node:perf_hooks';
import { Step, Workflow, type GenevaDriveTransport, type StepContext } from '../lib';
import { Order } from '../test/fixtures/order.entity';
import type { EngineHarness } from '../test/e2e/support/engine-harness';
import { chainWorkflow, parkedWorkflow } from './support/bench.workflows';
import { createOrders } from './support/dataset';
import { bootEngine } from './support/engine';
import { envInteger, runCount } from './support/env';
import { FinishLine } from './support/finish-line';
import { runBenchmark } from './support/main';
import { mapInParallel } from './support/parallel';
import { waitForParked } from './support/parked';
import { emit, repeatRuns, type Metrics } from './support/result';
import { latencySummary, round } from './support/stats';

const SAMPLES = envInteger('BENCH_SAMPLES', 100);
const WORKFLOWS = envInteger('BENCH_WORKFLOWS', 200);
const TRANSPORTS = (process.env.BENCH_TRANSPORTS ?? 'redis,postgres,local')
  .split(',')
  .map((name) => name.trim()) as GenevaDriveTransport[];

/** Resolves a first body's start time, by hero id (known before `start()` resolves). */
const firstBodies = new Map<number, (startedAt: number) => void>();
@Workflow({ name: 'TransportStartBenchWorkflow', hero: () => Order })
class StartLatencyWorkflow {
  @Step() first(ctx: StepContext<Order>) {
    firstBodies.get(ctx.hero.id)?.(performance.now());
  }
}

/** Resolves a woken body's start time, by workflow id. */
const wakes = new Map<string, (startedAt: number) => void>();
const WakeWorkflow = parkedWorkflow('TransportWakeBenchWorkflow', (id) =>
  wakes.get(id)?.(performance.now()),
);
const ThreeStepWorkflow = chainWorkflow('TransportThroughputBenchWorkflow', 3, null);

async function startLatencies(harness: EngineHarness, count: number): Promise<number[]> {
  const samples: number[] = [];
  for (const hero of await createOrders(harness.dataSource, count)) {
    const bodyStarted = new Promise<number>((resolve) => firstBodies.set(hero.id, resolve));
    const calledAt = performance.now();
    await harness.service.start(StartLatencyWorkflow, { hero });
    samples.push((await bodyStarted) - calledAt);
    firstBodies.delete(hero.id);
  }
  return samples;
}

async function wakeLatencies(harness: EngineHarness, count: number): Promise<number[]> {
  const heroes = await createOrders(harness.dataSource, count);
  const parked = await mapInParallel(heroes, 20, (hero) =>
    harness.service.start(WakeWorkflow, { hero }),
  );
  await waitForParked(harness, count);
  const samples: number[] = [];
  for (const { id } of parked) {
    const bodyStarted = new Promise<number>((resolve) => wakes.set(id, resolve));
    const calledAt = performance.now();
    await harness.service.signal(id, 'go');
    samples.push((await bodyStarted) - calledAt);
    wakes.delete(id);
  }
  return samples;
}

async function workflowsPerSecond(harness: EngineHarness, finishLine: FinishLine): Promise<number> {
  const heroes = await createOrders(harness.dataSource, WORKFLOWS);
  const startedAt = performance.now();
  const started = await mapInParallel(heroes, 20, (hero) =>
    harness.service.start(ThreeStepWorkflow, { hero }),
  );
  const finishedAt = await finishLine.expect(started.map(({ id }) => id));
  return (WORKFLOWS * 1000) / (finishedAt - startedAt);
}

async function measure(transport: GenevaDriveTransport, finishLine: FinishLine): Promise<Metrics> {
  const harness = await bootEngine({
    workflows: [StartLatencyWorkflow, WakeWorkflow, ThreeStepWorkflow],
    transport,
  });
  try {
    // Unmeasured: JIT warm-up and first connections stay out of the figures.
    await startLatencies(harness, 10);
    const start = latencySummary(await startLatencies(harness, SAMPLES));
    const wake = latencySummary(await wakeLatencies(harness, SAMPLES));
    const rate = await workflowsPerSecond(harness, finishLine);
    return {
      [`${transport}StartP50Ms`]: start.p50,
      [`${transport}StartP99Ms`]: start.p99,
      [`${transport}WakeP50Ms`]: wake.p50,
      [`${transport}WakeP99Ms`]: wake.p99,
      [`${transport}WorkflowsPerSecond`]: round(rate, 1),
    };
  } finally {
    await harness.close();
  }
}

runBenchmark(async () => {
  const finishLine = new FinishLine();
  const unwatch = finishLine.watchEngine();
  try {
    const runs = await repeatRuns(runCount(), async () => {
      const metrics: Metrics = {};
      for (const transport of TRANSPORTS)
        Object.assign(metrics, await measure(transport, finishLine));
      for (const other of TRANSPORTS.filter((name) => name !== 'redis')) {
        if (!TRANSPORTS.includes('redis')) break;
        metrics[`${other}StartP50VsRedis`] = round(
          metrics[`${other}StartP50Ms`] / metrics.redisStartP50Ms,
          2,
        );
        metrics[`${other}WakeP50VsRedis`] = round(
          metrics[`${other}WakeP50Ms`] / metrics.redisWakeP50Ms,
          2,
        );
        metrics[`${other}ThroughputVsRedis`] = round(
          metrics[`${other}WorkflowsPerSecond`] / metrics.redisWorkflowsPerSecond,
          2,
        );
      }
      return metrics;
    });
    await emit(
      'transports',
      { samples: SAMPLES, workflows: WORKFLOWS, transports: TRANSPORTS },
      runs,
    );
  } finally {
    unwatch();
  }
});
