import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { collectRun, type BenchmarkRun } from './benchmark-run';

/** Another commit of this repository, checked out with its own dependencies, to bench against. */
export interface BaselineCheckout {
  /** What BENCH_BASELINE named (a commit, tag or branch). */
  ref: string;
  sha: string;
  dir: string;
  /** Its package.json scripts, to find how it runs each benchmark. */
  scripts: Record<string, string>;
}

/**
 * A detached git worktree of `ref` (outside this checkout, so no test runner or linter of ours
 * walks into it), installed from its own lockfile the first time. BENCH_BASELINE_DIR overrides
 * where worktrees live (default: the system's temporary directory).
 */
export function prepareBaseline(ref: string, repositoryDir: string): BaselineCheckout {
  const git = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: repositoryDir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  let sha: string;
  try {
    sha = git('rev-parse', '--verify', '--quiet', `${ref}^{commit}`);
  } catch {
    throw new Error(
      `BENCH_BASELINE=${ref} names no commit of this repository: give a commit, tag or branch ` +
        '(e.g. BENCH_BASELINE=HEAD~1 or BENCH_BASELINE=77997ab).',
    );
  }
  const root = process.env.BENCH_BASELINE_DIR || join(tmpdir(), 'nestjs-geneva-drive-baseline');
  const dir = join(root, sha);
  if (!existsSync(join(dir, 'package.json'))) {
    mkdirSync(root, { recursive: true });
    git('worktree', 'add', '--detach', '--force', dir, sha);
  }
  if (!existsSync(join(dir, 'node_modules'))) {
    process.stderr.write(`Installing the baseline ${sha.slice(0, 10)} from its lockfile…\n`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: dir, stdio: ['ignore', 2, 2] });
  }
  const { scripts } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  return { ref, sha, dir, scripts };
}

/**
 * The baseline's npm script that runs the benchmark `file` (its own way: ts-node in older commits,
 * compiled in newer ones), or null when that commit has no such benchmark.
 */
export function baselineScript(baseline: BaselineCheckout, file: string): string | null {
  const stem = `/${basename(file, '.ts')}.`;
  const found = Object.entries(baseline.scripts).find(
    ([name, command]) => name.startsWith('bench:') && command.includes(stem),
  );
  return found ? found[0] : null;
}

/** Runs the baseline's `script` in its checkout; collects its result lines like `npm run bench`. */
export function runInBaseline(baseline: BaselineCheckout, script: string): Promise<BenchmarkRun> {
  return collectRun(
    spawn('npm', ['run', '--silent', script], {
      cwd: baseline.dir,
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
}
