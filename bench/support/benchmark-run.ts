import type { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import type { BenchResult } from './result';

/** What one benchmark process printed, how it exited and how long it took. */
export interface BenchmarkRun {
  results: BenchResult[];
  exitCode: number | null;
  seconds: number;
}

/**
 * Follows a benchmark child (its stdout piped): echoes every line to stderr and resolves its JSON
 * result lines once it exits.
 */
export function collectRun(child: ReturnType<typeof spawn>): Promise<BenchmarkRun> {
  const started = performance.now();
  const results: BenchResult[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
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
