import { extname, join, resolve } from 'node:path';

/**
 * Where the benchmark scripts are. `npm run bench` runs them compiled by tsc (tsconfig.bench.json,
 * into bench/.build), so the library's figures are those of the JavaScript users run; started as
 * TypeScript (ts-node), a script's children are started the same way.
 */
const compiled = extname(__filename) === '.js';

/** bench/, whichever way this runs (compiled: bench/.build/bench/support/ is three levels down). */
export const BENCH_DIR = compiled ? resolve(__dirname, '../../..') : resolve(__dirname, '..');

/** The script `name` (a path under bench/, written with `.ts`) in the form this process runs. */
export function benchScript(name: string): string {
  const root = compiled ? resolve(__dirname, '..') : BENCH_DIR;
  return join(root, compiled ? name.replace(/\.ts$/, '.js') : name);
}

/** Node options for a child running a benchmark script: ts-node only when not compiled. */
export const SCRIPT_EXEC_ARGV: readonly string[] = compiled
  ? []
  : ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'];
