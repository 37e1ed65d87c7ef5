/**
 * `npm run bench`: every benchmark, each in a child process of its own (one's heap and
 * connections never weigh on the next), one after the other. Collects their JSON lines, checks
 * them against the targets of issue #8 and against DBOS Transact's figures of the same run (issues
 * #17 and #21), writes bench/results/latest.json and latest.md, and prints the markdown.
 * BENCH_ONLY=hop,sql-per-step runs a subset (a group's name, `dbos`, selects all of its members);
 * every other BENCH_* variable reaches the benchmarks. Exits 1 when a benchmark failed (missing a
 * target is a finding, not a failure).
 * BENCH_BASELINE=<git ref> also runs each selected benchmark as that commit runs it (a worktree of
 * its own, installed from its lockfile), alternating with this checkout BENCH_BASELINE_ROUNDS times
 * (default 2) so both meet the same load, and reports every figure beside the baseline's.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  baselineScript,
  prepareBaseline,
  runInBaseline,
  type BaselineCheckout,
} from './support/baseline-checkout';
import { BENCH_DIR, benchScript, SCRIPT_EXEC_ARGV } from './support/bench-paths';
import { collectRun, type BenchmarkRun } from './support/benchmark-run';
import { envInteger } from './support/env';
import type { BenchResult } from './support/result';
import { compareWithBaseline, mergeRounds } from './support/versus-baseline';
import { renderSummary, type SuiteReport } from './support/summary';
import { checkComparisons, checkTargets } from './support/targets';

/**
 * In the order they run: quick and unloaded first, the large datasets last. Each DBOS Transact
 * counterpart runs right after the benchmark it is compared with, so both meet the same load.
 */
const BENCHMARKS: Array<{ name: string; file: string; group?: string }> = [
  { name: 'sql-per-step', file: 'sql-per-step.bench.ts' },
  { name: 'statement-cost', file: 'statement-cost.bench.ts' },
  { name: 'hop', file: 'hop.bench.ts' },
  { name: 'dbos-hop', file: 'dbos-hop.bench.ts', group: 'dbos' },
  { name: 'tracing', file: 'tracing.bench.ts' },
  { name: 'start-many', file: 'start-many.bench.ts' },
  { name: 'throughput', file: 'throughput.bench.ts' },
  { name: 'dbos-throughput', file: 'dbos-throughput.bench.ts', group: 'dbos' },
  { name: 'flatness', file: 'flatness.bench.ts' },
  { name: 'signal-wake', file: 'signal-wake.bench.ts' },
  { name: 'dbos-signal-wake', file: 'dbos-signal-wake.bench.ts', group: 'dbos' },
  { name: 'transports', file: 'transports.bench.ts' },
  { name: 'scale-out', file: 'scale-out.bench.ts' },
  { name: 'memory', file: 'memory.bench.ts' },
  { name: 'resumable', file: 'resumable-checkpoint.bench.ts' },
  { name: 'housekeeping', file: 'housekeeping.bench.ts' },
  { name: 'dashboard', file: 'dashboard.bench.ts' },
  { name: 'overload', file: 'overload.bench.ts' },
];
const RESULTS_DIR = join(BENCH_DIR, 'results');

/** Runs one benchmark file of this checkout in a child process. */
function runOne(file: string): Promise<BenchmarkRun> {
  return collectRun(
    spawn(process.execPath, [...SCRIPT_EXEC_ARGV, benchScript(file)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
}

async function main(): Promise<boolean> {
  const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim());
  const selected = BENCHMARKS.filter(
    ({ name, group }) =>
      !only || only.includes(name) || (group !== undefined && only.includes(group)),
  );
  const started = performance.now();
  const report: SuiteReport = {
    date: new Date().toISOString(),
    totalSeconds: 0,
    machine: null,
    benchmarks: [],
    results: [],
    targets: [],
    comparisons: [],
  };
  const baselineRef = process.env.BENCH_BASELINE;
  const baseline = baselineRef ? prepareBaseline(baselineRef, resolve(BENCH_DIR, '..')) : null;
  const rounds = baseline ? envInteger('BENCH_BASELINE_ROUNDS', 2) : 1;
  const baselineResults: BenchResult[] = [];
  for (const { name, file } of selected) {
    for (let round = 1; round <= rounds; round++) {
      const script = baseline && baselineScript(baseline, file);
      if (baseline && script) {
        const run = await announce(`${name} at the baseline (${script})`, () =>
          runInBaseline(baseline, script),
        );
        report.benchmarks.push({ name: `${name} (baseline)`, ...summaryOf(run) });
        baselineResults.push(...run.results);
      }
      const run = await announce(`${name} (${file})`, () => runOne(file));
      report.benchmarks.push({ name, ...summaryOf(run) });
      report.results.push(...run.results);
    }
  }
  if (baseline) {
    report.results = mergeRounds(report.results);
    report.baseline = baselineReport(baseline, rounds, report.results, baselineResults);
  }
  report.totalSeconds = Math.round((performance.now() - started) / 100) / 10;
  report.machine = report.results[0]?.machine ?? null;
  report.targets = checkTargets(report.results);
  report.comparisons = checkComparisons(report.results);
  const markdown = renderSummary(report);
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(RESULTS_DIR, 'latest.md'), markdown);
  process.stdout.write(`\n${markdown}`);
  return report.benchmarks.every(({ exitCode }) => exitCode === 0);
}

async function announce(label: string, run: () => Promise<BenchmarkRun>): Promise<BenchmarkRun> {
  process.stderr.write(`\n▶ ${label}\n`);
  const result = await run();
  process.stderr.write(`◀ ${label}: ${result.seconds} s, exit code ${result.exitCode}\n`);
  return result;
}

function summaryOf({ seconds, exitCode }: BenchmarkRun): {
  seconds: number;
  exitCode: number | null;
} {
  return { seconds, exitCode };
}

/** The baseline's rounds folded together, and this checkout's figures (folded) beside them. */
function baselineReport(
  baseline: BaselineCheckout,
  rounds: number,
  current: BenchResult[],
  baselineResults: BenchResult[],
): NonNullable<SuiteReport['baseline']> {
  const results = mergeRounds(baselineResults);
  return {
    ref: baseline.ref,
    sha: baseline.sha,
    rounds,
    results,
    figures: compareWithBaseline(current, results),
  };
}

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
