/** A positive integer from the environment (benchmark sizes), or `fallback` when unset. */
export function envInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : positiveInteger(name, raw);
}

/** A comma-separated list of positive integers from the environment, or `fallback`. */
export function envIntegers(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  return raw.split(',').map((part) => positiveInteger(name, part.trim()));
}

/** How many measured runs each benchmark takes its medians over (BENCH_RUNS, default 3). */
export function runCount(): number {
  return envInteger('BENCH_RUNS', 3);
}

/**
 * How many unmeasured runs of `stepsPerRun` steps a benchmark makes first: enough to reach
 * BENCH_WARMUP_STEPS (default 10,000), at least one. V8 compiles hot code in tiers over thousands
 * of calls, and until it is done the runs pay for the compiler (background threads, counted as
 * CPU) and run slower code: one workflow of 200 steps alone took 1.0–1.3 ms and 0.6–1.1 ms of
 * worker CPU per step in each of its first eight rounds, then 0.6–0.8 ms and 0.25–0.45 ms from the
 * twelfth round (2,400 steps) on. Ours and DBOS Transact's warm up by the same budget, so both are
 * measured as a server that has been up a while runs.
 */
export function warmUpRuns(stepsPerRun: number): number {
  return Math.max(1, Math.ceil(envInteger('BENCH_WARMUP_STEPS', 10_000) / stepsPerRun));
}

function positiveInteger(name: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new Error(`${name} must hold positive integers, but was '${raw}'.`);
  }
  return value;
}
