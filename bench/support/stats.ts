/** Rounds to `digits` decimals (3 by default: microseconds when the unit is ms). */
export function round(value: number, digits = 3): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** The nearest-rank percentile `p` (0-100) of `samples`; NaN when there are none. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** The middle sample, or the mean of the two middle ones; NaN when there are none. */
export function median(samples: readonly number[]): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** p50/p95/p99 of `samples`, rounded. */
export function latencySummary(samples: readonly number[]): {
  p50: number;
  p95: number;
  p99: number;
} {
  return {
    p50: round(percentile(samples, 50)),
    p95: round(percentile(samples, 95)),
    p99: round(percentile(samples, 99)),
  };
}

/** The median of each metric over the runs (every run reports the same metric names). */
export function medians(runs: ReadonlyArray<Record<string, number>>): Record<string, number> {
  const names = Object.keys(runs[0] ?? {});
  return Object.fromEntries(
    names.map((name) => [name, round(median(runs.map((run) => run[name])))]),
  );
}
