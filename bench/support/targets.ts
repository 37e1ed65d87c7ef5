import type { BenchResult } from './result';

/** A figure issue #8 asks the engine to reach, checked against every matching result line. */
export interface Target {
  benchmark: string;
  metric: string;
  /** What the figure means, for the summary. */
  label: string;
  goal: number;
  better: 'higher' | 'lower';
}

/** Reference throughput the engine must beat by 20% (steps/s). */
const REFERENCE_STEPS_PER_SECOND = 890;

const TARGETS: Target[] = [
  {
    benchmark: 'throughput',
    metric: 'stepsPerSecond',
    label: `steps/s (1.2 × ${REFERENCE_STEPS_PER_SECOND})`,
    goal: 1.2 * REFERENCE_STEPS_PER_SECOND,
    better: 'higher',
  },
  {
    benchmark: 'start-many',
    metric: 'ratio',
    label: 'workflows started per second, startMany ÷ a start() loop',
    goal: 20,
    better: 'higher',
  },
  {
    benchmark: 'hop',
    metric: 'msPerStep',
    label: 'ms per step, unloaded',
    goal: 3,
    better: 'lower',
  },
  {
    benchmark: 'sql-per-step',
    metric: 'regularStepCommits',
    label: 'commits per regular step',
    goal: 2,
    better: 'lower',
  },
  {
    benchmark: 'sql-per-step',
    metric: 'chainedStepCommits',
    label: 'commits per step chained in process',
    goal: 1,
    better: 'lower',
  },
  {
    benchmark: 'sql-per-step',
    metric: 'checkpointStatements',
    label: 'statements per checkpoint',
    goal: 1,
    better: 'lower',
  },
  {
    benchmark: 'signal-wake',
    metric: 'fromReturnP50Ms',
    label: 'signal() return → body, p50 ms',
    goal: 5,
    better: 'lower',
  },
  {
    benchmark: 'signal-wake',
    metric: 'fromReturnP99Ms',
    label: 'signal() return → body, p99 ms',
    goal: 10,
    better: 'lower',
  },
  {
    benchmark: 'flatness',
    metric: 'deepToFreshRatio',
    label: 'step time of a deep workflow ÷ a fresh one, side by side',
    goal: 1.1,
    better: 'lower',
  },
  {
    benchmark: 'memory',
    metric: 'rssDeltaMb',
    label: 'worker RSS with parked − none, MB',
    goal: 10,
    better: 'lower',
  },
  {
    benchmark: 'memory',
    metric: 'liveJobsParked',
    label: 'live BullMQ jobs with parked workflows',
    goal: 0,
    better: 'lower',
  },
  {
    benchmark: 'memory',
    metric: 'redisKeysBeyondCompletedJobs',
    label: 'Redis keys added by parked workflows',
    goal: 0,
    better: 'lower',
  },
  {
    benchmark: 'dashboard',
    metric: 'slowestListPageMs',
    label: 'slowest dashboard list page over HTTP (first, filtered, deep), p50 ms',
    goal: 100,
    better: 'lower',
  },
];

/** A target checked against one result line. */
export interface TargetCheck extends Target {
  parameters: Record<string, unknown>;
  value: number;
  /** value ÷ goal; null when the goal is 0. */
  ratio: number | null;
  met: boolean;
}

export function checkTargets(results: BenchResult[]): TargetCheck[] {
  return TARGETS.flatMap((target) =>
    results
      .filter((result) => result.name === target.benchmark && target.metric in result.metrics)
      .map((result) => {
        const value = result.metrics[target.metric];
        return {
          ...target,
          parameters: result.parameters,
          value,
          ratio: target.goal === 0 ? null : Math.round((value / target.goal) * 100) / 100,
          met: target.better === 'higher' ? value >= target.goal : value <= target.goal,
        };
      }),
  );
}
