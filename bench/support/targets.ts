import type { BenchResult } from './result';

/** A figure issue #8 asks the engine to reach, checked against every matching result line. */
export interface Target {
  benchmark: string;
  metric: string;
  /** What the figure means, for the summary. */
  label: string;
  goal: number;
  better: 'higher' | 'lower';
  /**
   * Another metric of the same result line the figure cannot pass on this machine at that moment
   * (the most a `higher` figure could be, the least a `lower` one): when it alone misses the goal,
   * the goal is out of reach of the design measured.
   */
  bound?: { metric: string; label: string };
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
    benchmark: 'throughput',
    metric: 'cpuMsPerStep',
    label: 'CPU ms per step (worker + its PostgreSQL backends + Redis)',
    goal: 0.75,
    better: 'lower',
  },
  {
    benchmark: 'start-many',
    metric: 'ratio',
    label: 'workflows started per second, startMany ÷ a start() loop',
    goal: 20,
    better: 'higher',
    bound: {
      metric: 'ratioBound',
      label:
        "the ratio with the library's own work free: the bulk starts' PostgreSQL backend CPU plus Redis's, one after the other",
    },
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
  /** The bound's figure and whether the goal is within its reach. */
  reach?: { value: number; reachable: boolean };
}

export function checkTargets(results: BenchResult[]): TargetCheck[] {
  return TARGETS.flatMap((target) =>
    results
      .filter((result) => result.name === target.benchmark && target.metric in result.metrics)
      .map((result) => {
        const value = result.metrics[target.metric];
        const meets = (figure: number) =>
          target.better === 'higher' ? figure >= target.goal : figure <= target.goal;
        const bound = target.bound && result.metrics[target.bound.metric];
        return {
          ...target,
          parameters: result.parameters,
          value,
          ratio: target.goal === 0 ? null : Math.round((value / target.goal) * 100) / 100,
          met: meets(value),
          ...(bound !== undefined && { reach: { value: bound, reachable: meets(bound) } }),
        };
      }),
  );
}

/**
 * A figure of the engine's that must stand in a ratio to DBOS Transact's, measured in the same
 * `npm run bench` (issues #17 and #21), so the machine's load weighs on both.
 */
export interface Comparison {
  benchmark: string;
  metric: string;
  /** DBOS's result line and figure set beside it. */
  versus: { benchmark: string; metric: string };
  /** Parameters the two result lines must share to be compared (the shape of the run). */
  match: string[];
  /** What the figure means, for the summary. */
  label: string;
  /** The engine's figure ÷ DBOS's must be at least (`higher`) or at most (`lower`) this. */
  factor: number;
  better: 'higher' | 'lower';
  /**
   * For a `lower` figure: another metric of the same result line that no design doing the work
   * the issue prescribes can go below on this machine at that moment. When it alone is above
   * `factor` × DBOS's figure, the target is out of that design's reach.
   */
  bound?: { metric: string; label: string };
}

const COMPARISONS: Comparison[] = [
  {
    benchmark: 'throughput',
    metric: 'stepsPerSecond',
    versus: { benchmark: 'dbos-throughput', metric: 'stepsPerSecond' },
    match: ['workflows', 'steps', 'concurrency'],
    label: 'steps/s, many workflows',
    factor: 1.5,
    better: 'higher',
  },
  {
    benchmark: 'hop',
    metric: 'msPerStep',
    versus: { benchmark: 'dbos-hop', metric: 'msPerStep' },
    match: ['workflows', 'steps'],
    label: 'ms per step, one workflow alone',
    factor: 0.5,
    better: 'lower',
    bound: {
      metric: 'commitRoundTripP50Ms',
      label: 'one commit round trip (a step chained in process commits once)',
    },
  },
  {
    benchmark: 'signal-wake',
    metric: 'fromCallP50Ms',
    versus: { benchmark: 'dbos-signal-wake', metric: 'fromCallP50Ms' },
    match: ['wakeups'],
    label: 'wake p50 ms, from the start of signal() / send() to the woken step',
    factor: 0.8,
    better: 'lower',
  },
  {
    benchmark: 'signal-wake',
    metric: 'fromCallP99Ms',
    versus: { benchmark: 'dbos-signal-wake', metric: 'fromCallP99Ms' },
    match: ['wakeups'],
    label: 'wake p99 ms, from the start of signal() / send() to the woken step',
    factor: 0.8,
    better: 'lower',
  },
  {
    benchmark: 'signal-wake',
    metric: 'callP50Ms',
    versus: { benchmark: 'dbos-signal-wake', metric: 'callP50Ms' },
    match: ['wakeups'],
    label: 'signal() call vs send() call, p50 ms',
    factor: 1,
    better: 'lower',
    bound: {
      metric: 'callDatabaseP50Ms',
      label: "the signal() message's PostgreSQL round trip alone",
    },
  },
];

/** A comparison checked against one pair of result lines. */
export interface ComparisonCheck extends Comparison {
  parameters: Record<string, unknown>;
  value: number;
  versusValue: number;
  /** value ÷ versusValue, rounded to 2 decimals (`met` is decided before rounding). */
  ratio: number;
  met: boolean;
  /** The bound's figure, its ratio to DBOS's, and whether the target is within its reach. */
  reach?: { value: number; ratio: number; reachable: boolean };
}

/** Each comparison for every result line of ours that has a DBOS line of the same shape. */
export function checkComparisons(results: BenchResult[]): ComparisonCheck[] {
  return COMPARISONS.flatMap((comparison) =>
    results
      .filter(
        (result) => result.name === comparison.benchmark && comparison.metric in result.metrics,
      )
      .flatMap((ours) => {
        const theirs = results.find(
          (result) =>
            result.name === comparison.versus.benchmark &&
            comparison.versus.metric in result.metrics &&
            comparison.match.every((key) => result.parameters[key] === ours.parameters[key]),
        );
        if (!theirs) return [];
        const value = ours.metrics[comparison.metric];
        const versusValue = theirs.metrics[comparison.versus.metric];
        const ratio = value / versusValue;
        const bound = comparison.bound && ours.metrics[comparison.bound.metric];
        return [
          {
            ...comparison,
            parameters: ours.parameters,
            value,
            versusValue,
            ratio: Math.round(ratio * 100) / 100,
            met:
              comparison.better === 'higher'
                ? ratio >= comparison.factor
                : ratio <= comparison.factor,
            ...(bound !== undefined && {
              reach: {
                value: bound,
                ratio: Math.round((bound / versusValue) * 100) / 100,
                reachable: bound / versusValue <= comparison.factor,
              },
            }),
          },
        ];
      }),
  );
}
