/**
 * `npm run bench:resumable`: a `@ResumableStep` walking ROWS subscriber rows (BENCH_ROWS, default
 * 100k) with `iterateOverRecords`, one checkpoint per row, on a real app (PostgreSQL + BullMQ,
 * fresh schema). Prints one JSON line: items/s, the median time between checkpoints, and the SQL
 * statements per checkpoint (counted through the DataSource's logger, which TypeORM calls for
 * every query).
 */
import 'reflect-metadata';
import { performance } from 'node:perf_hooks';
import { cpus } from 'node:os';
import { DataSource } from 'typeorm';
import { ResumableStep, Workflow, type IterableStep, type StepContext } from '../lib';
import { Order } from '../test/fixtures/order.entity';
import { Subscriber } from '../test/fixtures/subscriber.entity';
import { EngineHarness } from '../test/e2e/support/engine-harness';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const itemTimes: number[] = [];
let statements = 0;

/** Walks every subscriber, doing no work per row: what is measured is the checkpointing. */
@Workflow({ hero: () => Order })
class CheckpointBenchWorkflow {
  constructor(private readonly dataSource: DataSource) {}

  @ResumableStep({ maxIterations: 1_000_000_000 })
  async walk(iter: IterableStep<number>, _ctx: StepContext<Order>) {
    const query = this.dataSource.getRepository(Subscriber).createQueryBuilder('subscriber');
    await iter.iterateOverRecords(query, () => void itemTimes.push(performance.now()));
  }
}

async function main(): Promise<void> {
  const harness = await EngineHarness.boot({ workflows: [CheckpointBenchWorkflow], entities: [Order, Subscriber] });
  try {
    await harness.dataSource.query(
      `INSERT INTO "${harness.schema}"."test_subscribers" (email) SELECT 's' || n || '@example.com' FROM generate_series(1, $1) n`,
      [ROWS],
    );
    const logger = harness.dataSource.logger;
    Object.assign(harness.dataSource, {
      logger: Object.assign(Object.create(logger) as object, {
        logQuery: () => {
          statements += 1;
        },
      }),
    });
    const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    const started = performance.now();
    const workflow = await harness.service.start(CheckpointBenchWorkflow, { hero: order });
    await harness.waitForState(workflow.id, 'finished', 30 * 60_000);
    const elapsedMs = performance.now() - started;
    const gaps = itemTimes.slice(1).map((t, i) => t - itemTimes[i]).sort((a, b) => a - b);
    console.log(
      JSON.stringify({
        name: 'resumable-checkpoint',
        parameters: { rows: ROWS, pageSize: 100 },
        itemsPerSecond: Math.round((ROWS / elapsedMs) * 1000),
        medianMsPerCheckpoint: Math.round(gaps[Math.floor(gaps.length / 2)] * 1000) / 1000,
        statementsPerCheckpoint: Math.round((statements / ROWS) * 100) / 100,
        totalStatements: statements,
        machine: { cpus: cpus().length, node: process.version },
      }),
    );
  } finally {
    await harness.close();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
