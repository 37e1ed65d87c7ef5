import 'reflect-metadata';
import { machineInfo } from './machine';

/**
 * The entry point of a `*.bench.ts` file: reads the machine first (its load average is the one
 * the benchmark started under), runs `main`, and exits 1 when it throws or resolves false (a
 * check failed), 0 otherwise. Exiting explicitly ends any connection a failure left open.
 */
export function runBenchmark(main: () => Promise<boolean | void>): void {
  machineInfo()
    .then(main)
    .then(
      (ok) => process.exit(ok === false ? 1 : 0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
}
