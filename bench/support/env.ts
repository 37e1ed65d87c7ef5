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
 * How many unmeasured rounds a per-step benchmark runs first (BENCH_WARMUP_ROUNDS, default 5):
 * V8 compiles a hot function in tiers over thousands of calls, and one round of 200 steps leaves
 * the first measured runs paying for the compiler (background threads, counted as CPU) and slower
 * code. Ours and DBOS Transact's take the same number, so both are measured warm, as a server
 * that has been up a while runs.
 */
export function warmUpRounds(): number {
  return envInteger('BENCH_WARMUP_ROUNDS', 5);
}

function positiveInteger(name: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new Error(`${name} must hold positive integers, but was '${raw}'.`);
  }
  return value;
}
