/**
 * `npm run bench`: every benchmark, each in a child process of its own (one's heap and
 * connections never weigh on the next), one after the other. Collects their JSON lines, checks
 * them against the targets of issue #8, writes bench/results/latest.json and latest.md, and prints
 * the markdown. BENCH_ONLY=hop,sql-per-step runs a subset; every other BENCH_* variable reaches
 * the benchmarks. Exits 1 when a benchmark failed (missing a target is a finding, not a failure).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import type { BenchResult } from './support/result';
import { renderSummary, type SuiteReport } from './support/summary';
import { checkTargets } from './support/targets';

/** In the order they run: quick and unloaded first, the large datasets last. */
const BENCHMARKS: Array<{ name: string; file: string }> = [
  { name: 'sql-per-step', file: 'sql-per-step.bench.ts' },
  { name: 'statement-cost', file: 'statement-cost.bench.ts' },
  { name: 'hop', file: 'hop.bench.ts' },
  { name: 'tracing', file: 'tracing.bench.ts' },
  { name: 'start-many', file: 'start-many.bench.ts' },
  { name: 'throughput', file: 'throughput.bench.ts' },
  { name: 'flatness', file: 'flatness.bench.ts' },
  { name: 'signal-wake', file: 'signal-wake.bench.ts' },
  { name: 'transports', file: 'transports.bench.ts' },
  { name: 'scale-out', file: 'scale-out.bench.ts' },
  { name: 'memory', file: 'memory.bench.ts' },
  { name: 'resumable', file: 'resumable-checkpoint.bench.ts' },
  { name: 'housekeeping', file: 'housekeeping.bench.ts' },
  { name: 'dashboard', file: 'dashboard.bench.ts' },
  { name: 'overload', file: 'overload.bench.ts' },
];
/** `npm run typecheck` checks the benchmarks; compiling each child without it saves seconds. */
const EXEC_ARGV = ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'];
const RESULTS_DIR = join(__dirname, 'results');

/** Runs one benchmark file; resolves its result lines, its exit code and its duration. */
function runOne(
  file: string,
): Promise<{ results: BenchResult[]; exitCode: number | null; seconds: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [...EXEC_ARGV, join(__dirname, file)], {
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
  const selected = BENCHMARKS.filter(({ name }) => !only || only.includes(name));
  const started = performance.now();
  const report: SuiteReport = {
    date: new Date().toISOString(),
    totalSeconds: 0,
    machine: null,
    benchmarks: [],
    results: [],
    targets: [],
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
