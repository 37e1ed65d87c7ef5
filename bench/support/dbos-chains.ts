import { performance } from 'node:perf_hooks';
import { chainMetrics } from './chain-metrics';
import { startCpuMeter } from './cpu-meter';
import { DBOS_APPLICATION_NAME, type DbosBench } from './dbos';
import { mapInParallel } from './parallel';
import type { Metrics } from './result';
import { round } from './stats';
import type { StepTimeline } from './step-timeline';

export interface DbosChainRun {
  dbos: DbosBench;
  /** A `dbosChainWorkflow` of `steps` steps recording on `timeline`. */
  workflow: (chain: string) => Promise<void>;
  workflows: number;
  steps: number;
  concurrency: number;
  timeline: StepTimeline;
}

/**
 * One run of `workflows` × `steps` on DBOS Transact: `concurrency` workflows in flight at a time,
 * each started in this process as soon as one finishes (DBOS runs a workflow started outside a
 * queue at once; its queues dispatch on a poll, 1 s by default, which would measure the poll).
 * Timed from the first start to the last finish, so DBOS's figure includes writing each
 * workflow's status row, which the engine's leaves out (its workflows start while the queue is
 * paused). Metrics: those of `chainMetrics`, and the CPU per step of this process, of every
 * PostgreSQL process and of DBOS's own backends, named as the engine's runs name them.
 */
export async function runDbosChains(run: DbosChainRun): Promise<Metrics> {
  const chains = Array.from({ length: run.workflows }, (_, index) => `chain-${index}`);
  const total = run.workflows * run.steps;
  run.timeline.clear();
  const cpuSpent = await startCpuMeter(run.dbos.dataSource, DBOS_APPLICATION_NAME);
  const startedAt = performance.now();
  await mapInParallel(chains, run.concurrency, run.workflow);
  const elapsedMs = performance.now() - startedAt;
  const cpu = await cpuSpent();
  const metrics = chainMetrics(total, elapsedMs, run.timeline);
  run.timeline.clear();
  return {
    ...metrics,
    workerCpuMsPerStep: round(cpu.workerMs / total),
    postgresCpuMsPerStep: round(cpu.postgresMs / total),
    postgresOwnCpuMsPerStep: round(cpu.postgresOwnMs / total),
  };
}
