import type { BenchResult } from './result';
import { medians, round } from './stats';

/** One figure of a result line, this checkout's beside the baseline's of the same run. */
export interface BaselineFigure {
  benchmark: string;
  parameters: Record<string, unknown>;
  metric: string;
  current: number;
  baseline: number;
  /** current ÷ baseline; null when the baseline's figure is 0. */
  ratio: number | null;
  /** Set for the figures the hot path must hold (issue #14): whether it did. */
  held?: boolean;
}

/**
 * The figures a change of the hot path must hold against its baseline (issue #14: "throughput and
 * hop within 5% of before or better").
 */
const HELD: Array<{ benchmark: string; metric: string; better: 'higher' | 'lower' }> = [
  { benchmark: 'throughput', metric: 'stepsPerSecond', better: 'higher' },
  { benchmark: 'hop', metric: 'msPerStep', better: 'lower' },
];
export const HELD_TOLERANCE = 0.05;

const keyOf = (result: BenchResult) => `${result.name} ${JSON.stringify(result.parameters)}`;

/**
 * Result lines of several rounds folded into one per benchmark and parameters: the runs of every
 * round together, and their medians.
 */
export function mergeRounds(results: readonly BenchResult[]): BenchResult[] {
  const merged = new Map<string, BenchResult>();
  for (const result of results) {
    const known = merged.get(keyOf(result));
    if (!known) merged.set(keyOf(result), { ...result, runs: [...result.runs] });
    else known.runs.push(...result.runs);
  }
  return [...merged.values()].map((result) => ({ ...result, metrics: medians(result.runs) }));
}

/** Every metric both sides report, per result line both sides have, with its ratio. */
export function compareWithBaseline(
  current: readonly BenchResult[],
  baseline: readonly BenchResult[],
): BaselineFigure[] {
  const before = new Map(baseline.map((result) => [keyOf(result), result]));
  return current.flatMap((result) => {
    const counterpart = before.get(keyOf(result));
    if (!counterpart) return [];
    return Object.entries(result.metrics)
      .filter(([metric]) => metric in counterpart.metrics)
      .map(([metric, value]): BaselineFigure => {
        const was = counterpart.metrics[metric];
        const ratio = was === 0 ? null : round(value / was, 2);
        const figure: BaselineFigure = {
          benchmark: result.name,
          parameters: result.parameters,
          metric,
          current: value,
          baseline: was,
          ratio,
        };
        const rule = HELD.find((held) => held.benchmark === result.name && held.metric === metric);
        if (rule && ratio !== null)
          figure.held =
            rule.better === 'higher' ? ratio >= 1 - HELD_TOLERANCE : ratio <= 1 + HELD_TOLERANCE;
        return figure;
      });
  });
}
