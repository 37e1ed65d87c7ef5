import type { Type } from '@nestjs/common';
import type { EngineHarness } from '../../test/e2e/support/engine-harness';
import { runBullmqChains } from './bullmq-chains';
import { chainMetrics } from './chain-metrics';
import { startCpuMeter } from './cpu-meter';
import { createOrders } from './dataset';
import { runWorkflows } from './engine';
import type { FinishLine } from './finish-line';
import type { Metrics } from './result';
import { round } from './stats';
import type { StepTimeline } from './step-timeline';

export interface VersusFloorRun {
  harness: EngineHarness;
  /** A `chainWorkflow` of `steps` steps recording on `timeline`. */
  workflow: Type<object>;
  workflows: number;
  steps: number;
  concurrency: number;
  timeline: StepTimeline;
  finishLine: FinishLine;
}

/**
 * One run of `workflows` × `steps` on the engine, then the same shape as raw BullMQ chains at the
 * same concurrency (the floor), back to back so both meet the same machine load. Metrics: the
 * engine's rate and gaps, CPU per step of the worker, PostgreSQL and Redis during the engine's run
 * and their sum (`cpuMsPerStep`: the worker, this pool's backends, Redis), the floor's figures
 * (`floor…`, its CPU the worker's and Redis's), and the engine's share of the floor's rate.
 */
export async function runVersusFloor(run: VersusFloorRun): Promise<Metrics> {
  const heroes = await createOrders(run.harness.dataSource, run.workflows);
  const total = run.workflows * run.steps;
  run.timeline.clear();
  const cpuSpent = await startCpuMeter(run.harness.dataSource);
  const engineMs = await runWorkflows(run.harness, run.workflow, heroes, run.finishLine);
  const cpu = await cpuSpent();
  const engine = chainMetrics(total, engineMs, run.timeline);
  run.timeline.clear();
  const floorCpuSpent = await startCpuMeter(run.harness.dataSource);
  const floorMs = await runBullmqChains({
    chains: run.workflows,
    steps: run.steps,
    concurrency: run.concurrency,
    timeline: run.timeline,
  });
  const floorCpu = await floorCpuSpent();
  const floor = chainMetrics(total, floorMs, run.timeline);
  run.timeline.clear();
  return {
    ...engine,
    workerCpuMsPerStep: round(cpu.workerMs / total),
    postgresCpuMsPerStep: round(cpu.postgresMs / total),
    postgresOwnCpuMsPerStep: round(cpu.postgresOwnMs / total),
    redisCpuMsPerStep: round(cpu.redisMs / total),
    cpuMsPerStep: round((cpu.workerMs + cpu.postgresOwnMs + cpu.redisMs) / total),
    floorStepsPerSecond: floor.stepsPerSecond,
    floorMsPerStep: floor.msPerStep,
    floorGapP50Ms: floor.gapP50Ms,
    floorGapP99Ms: floor.gapP99Ms,
    floorCpuMsPerStep: round((floorCpu.workerMs + floorCpu.redisMs) / total),
    shareOfFloor: round(engine.stepsPerSecond / floor.stepsPerSecond),
  };
}
