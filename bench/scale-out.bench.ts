/**
 * `npm run bench:scale-out`: steps/s with 1, 2 and 4 worker processes (BENCH_WORKERS) on the same
 * PostgreSQL schema and Redis prefix, each consuming with concurrency BENCH_CONCURRENCY (default
 * 8). This process runs a `worker: false` app that starts BENCH_WORKFLOWS workflows (default 100)
 * of BENCH_STEPS trivial steps (default 10) while the queue is paused, resumes it, and counts the
 * finishes the workers report over IPC. Workers are added between configurations (1, then one
 * more, then two more). One JSON line per configuration, medians over BENCH_RUNS runs (default 3).
 */
import { createOrders } from './support/dataset';
import { DeploymentChainWorkflow, DEPLOYMENT_WORKFLOWS } from './support/deployment.workflows';
import { bootEngine, runWorkflows } from './support/engine';
import { envInteger, envIntegers, runCount } from './support/env';
import { FinishLine } from './support/finish-line';
import { ForkedWorker } from './support/forked-worker';
import { runBenchmark } from './support/main';
import { emit, repeatRuns } from './support/result';
import { round } from './support/stats';

const WORKERS = envIntegers('BENCH_WORKERS', [1, 2, 4]).sort((a, b) => a - b);
const WORKFLOWS = envInteger('BENCH_WORKFLOWS', 100);
const STEPS = envInteger('BENCH_STEPS', 10);
const CONCURRENCY = envInteger('BENCH_CONCURRENCY', 8);
/** Workflows run once per configuration before measuring, so new workers are warm. */
const WARM_UP_WORKFLOWS = 20;

runBenchmark(async () => {
  const harness = await bootEngine({ workflows: DEPLOYMENT_WORKFLOWS, worker: false });
  const finishLine = new FinishLine();
  const workers: ForkedWorker[] = [];
  try {
    for (const count of WORKERS) {
      const added = await Promise.all(
        Array.from({ length: count - workers.length }, () =>
          ForkedWorker.start({
            schema: harness.schema,
            prefix: harness.prefix,
            concurrency: CONCURRENCY,
            steps: STEPS,
            onFinished: (id) => finishLine.finished(id),
          }),
        ),
      );
      workers.push(...added);
      const run = async (workflows: number) => {
        const heroes = await createOrders(harness.dataSource, workflows);
        return runWorkflows(harness, DeploymentChainWorkflow, heroes, finishLine);
      };
      await run(WARM_UP_WORKFLOWS);
      const runs = await repeatRuns(runCount(), async () => {
        const elapsedMs = await run(WORKFLOWS);
        return { stepsPerSecond: round(((WORKFLOWS * STEPS) / elapsedMs) * 1000, 1) };
      });
      await emit(
        'scale-out',
        { workers: count, workflows: WORKFLOWS, steps: STEPS, concurrencyPerWorker: CONCURRENCY },
        runs,
      );
    }
  } finally {
    await Promise.all(workers.map((worker) => worker.stop()));
    await harness.close();
  }
});
