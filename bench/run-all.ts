/**
 * `npm run bench`: every benchmark, each in a child process of its own (one's heap and
 * connections never weigh on the next), one after the other. Collects their JSON lines, checks
 * them against the targets of issue #8 and against DBOS Transact's figures of the same run (issues
 * #17 and #21), writes bench/results/latest.json and latest.md, and prints the markdown.
 * BENCH_ONLY=hop,sql-per-step runs a subset (a group's name, `dbos`, selects all of its members);
 * every other BENCH_* variable reaches the benchmarks. Exits 1 when a benchmark failed (missing a
 * target is a finding, not a failure).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { BENCH_DIR, benchScript, SCRIPT_EXEC_ARGV } from './support/bench-paths';
import type { BenchResult } from './support/result';
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

/** Runs one benchmark file; resolves its result lines, its exit code and its duration. */
function runOne(
  file: string,
): Promise<{ results: BenchResult[]; exitCode: number | null; seconds: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [...SCRIPT_EXEC_ARGV, benchScript(file)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const results: BenchResult[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    process.stderr.write(`${line}\n`);
    if (line.startsWith('{')) results.push(JSON.parse(line) as BenchResult);
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (exitCode) =>
      resolve({ results, exitCode, seconds: Math.round((performance.now() - started) / 100) / 10 }),
    );
  });
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
  for (const { name, file } of selected) {
    process.stderr.write(`\n▶ ${name} (${file})\n`);
    const { results, exitCode, seconds } = await runOne(file);
    process.stderr.write(`◀ ${name}: ${seconds} s, exit code ${exitCode}\n`);
    report.benchmarks.push({ name, seconds, exitCode });
    report.results.push(...results);
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

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
