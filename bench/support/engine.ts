import type { Provider, Type } from '@nestjs/common';
import type { GenevaDriveTransport } from '../../lib';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Order } from '../../test/fixtures/order.entity';
import { EngineHarness } from '../../test/e2e/support/engine-harness';
import type { EntitySchemaTarget } from '../../test/e2e/support/database';
import { BENCH_APPLICATION_NAME } from './cpu-meter';
import type { FinishLine } from './finish-line';
import { mapInParallel } from './parallel';

/** The default queue's worker concurrency unless a benchmark sets its own (the module default). */
export const DEFAULT_CONCURRENCY = 10;

export interface BenchEngineOptions {
  workflows: Provider[];
  /** Beside `Order`, the heroes' entity. */
  entities?: EntitySchemaTarget[];
  /** Worker concurrency of the default queue (default 10). */
  concurrency?: number;
  /** Whether this process consumes jobs (default true). */
  worker?: boolean;
  /** Join another process's schema and queue prefix (a worker of the same deployment). */
  reuse?: { schema: string; prefix: string };
  /** Where step jobs travel (default 'redis'); 'postgres' uses the bench's database. */
  transport?: GenevaDriveTransport;
  /** The module's `tracing` option (default off). */
  tracing?: boolean;
}

/**
 * The pool the README's "Connection pool" advice gives a process with this worker concurrency,
 * PostgreSQL running on this machine: about 4 connections per core, at least 3, and never more
 * than the steps (one each while it prepares or finalizes) and housekeeping (two) can use.
 * DBOS Transact's pool gets the same size in its benchmarks.
 */
export function benchPoolSize(concurrency: number): number {
  return Math.min(concurrency + 2, Math.max(3, 4 * cpus().length));
}

/**
 * A real app on PostgreSQL and Redis (fresh schema and prefix unless `reuse`), its pool sized as
 * the README advises (`benchPoolSize`), housekeeping off.
 */
export function bootEngine(options: BenchEngineOptions): Promise<EngineHarness> {
  const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
  return EngineHarness.boot({
    workflows: options.workflows,
    entities: [Order, ...(options.entities ?? [])],
    options: {
      queues: { 'geneva-drive': { concurrency } },
      worker: options.worker ?? true,
      ...(options.transport === 'postgres'
        ? // {} stands for "the data source's database" (past the harness's Redis default).
          { transport: 'postgres' as const, connection: {} }
        : options.transport
          ? { transport: options.transport }
          : {}),
      ...(options.tracing ? { tracing: true } : {}),
      // BENCH_PREPARED_STATEMENTS=true measures the opt-in named statements (default: unnamed).
      ...(process.env.BENCH_PREPARED_STATEMENTS === 'true' ? { preparedStatements: true } : {}),
    },
    // Named, so the CPU meter finds this process's backends; kept open, so none of them exits
    // (taking its CPU time along) between two measured stretches.
    extra: {
      max: benchPoolSize(concurrency),
      application_name: BENCH_APPLICATION_NAME,
      idleTimeoutMillis: 0,
    },
    reuse: options.reuse,
  });
}

/**
 * Starts one `workflow` per hero while the queue is paused, so every first job waits in Redis,
 * then resumes the queue: resolves the milliseconds from the resume to the last workflow's
 * finish, as reported on `finishLine` (by this process's engine or by worker processes).
 * `stallMs`: how long no workflow may finish before the run is given up (default 60 s).
 */
export async function runWorkflows(
  harness: EngineHarness,
  workflow: Type<object>,
  heroes: Order[],
  finishLine: FinishLine,
  stallMs?: number,
): Promise<number> {
  const queue = harness.queue();
  await queue.pause();
  const started = await mapInParallel(heroes, 20, (hero) =>
    harness.service.start(workflow, { hero }),
  );
  const finished = finishLine.expect(
    started.map(({ id }) => id),
    stallMs,
  );
  const resumedAt = performance.now();
  await queue.resume();
  return (await finished) - resumedAt;
}
