/**
 * `npm run bench:resumable`: a `@ResumableStep` walking subscriber rows with `iterateOverRecords`
 * (keyset pages of 100, one checkpoint per row), doing no work per row: what is measured is the
 * checkpointing. The table holds BENCH_ROWS rows (default 100k); each of the BENCH_RUNS runs
 * (default 3) walks its own share of them in a new workflow, so the runs together cover the table
 * once. One JSON line: items/s, the median and p99 time between checkpoints, and the SQL per
 * checkpoint (statements sent between the first and the last row's body, page reads included,
 * counted through the DataSource's logger), medians over the runs.
 */
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import { ResumableStep, Workflow, type IterableStep, type StepContext } from '../lib';
import { Order } from '../test/fixtures/order.entity';
import { Subscriber } from '../test/fixtures/subscriber.entity';
import { createOrders, qualifiedTable } from './support/dataset';
import { bootEngine, runWorkflows } from './support/engine';
import { envInteger, runCount } from './support/env';
import { FinishLine } from './support/finish-line';
import { runBenchmark } from './support/main';
import { emit, repeatRuns } from './support/result';
import { SqlCounter, type SqlCount } from './support/sql-counter';
import { percentile, round } from './support/stats';

const ROWS = envInteger('BENCH_ROWS', 100_000);
/** A run is one long step: only its end is reported, so give up only after 30 minutes. */
const STALL_MS = 30 * 60_000;
/** The id range the next workflow walks. */
const slice = { after: 0, upTo: 0 };
const itemTimes: number[] = [];
let counter: SqlCounter;
/** What was sent from the first row's body to the last's. */
let counted: SqlCount | null = null;

/** The last count, cleared for the next run. */
function takeCounted(): SqlCount | null {
  const sql = counted;
  counted = null;
  return sql;
}

@Workflow({ name: 'CheckpointBenchWorkflow', hero: () => Order })
class CheckpointBenchWorkflow {
  constructor(private readonly dataSource: DataSource) {}

  @ResumableStep({ maxIterations: 1_000_000_000 })
  async walk(iter: IterableStep<number>, _ctx: StepContext<Order>) {
    const query = this.dataSource
      .getRepository(Subscriber)
      .createQueryBuilder('subscriber')
      .where('subscriber.id > :after AND subscriber.id <= :upTo', slice);
    await iter.iterateOverRecords(query, (subscriber) => {
      itemTimes.push(performance.now());
      if (subscriber.id === slice.after + 1) counter.start();
      if (subscriber.id === slice.upTo) counted = counter.stop();
    });
  }
}

runBenchmark(async () => {
  const harness = await bootEngine({
    workflows: [CheckpointBenchWorkflow],
    entities: [Subscriber],
  });
  const finishLine = new FinishLine();
  const unwatch = finishLine.watchEngine();
  try {
    await harness.dataSource.query(
      `INSERT INTO ${qualifiedTable(harness.dataSource, Subscriber)} (email)
       SELECT 's' || n || '@example.com' FROM generate_series(1, $1::int) n`,
      [ROWS],
    );
    counter = SqlCounter.install(harness.dataSource);
    const count = runCount();
    const perRun = Math.floor(ROWS / count);
    const runs = await repeatRuns(count, async (index) => {
      Object.assign(slice, { after: index * perRun, upTo: (index + 1) * perRun });
      itemTimes.length = 0;
      takeCounted();
      const elapsedMs = await runWorkflows(
        harness,
        CheckpointBenchWorkflow,
        await createOrders(harness.dataSource, 1),
        finishLine,
        STALL_MS,
      );
      const sql = takeCounted();
      if (!sql || itemTimes.length !== perRun)
        throw new Error(`The step walked ${itemTimes.length} of ${perRun} rows.`);
      const periods = itemTimes.slice(1).map((time, k) => time - itemTimes[k]);
      const checkpoints = perRun - 1;
      return {
        itemsPerSecond: round((perRun / elapsedMs) * 1000, 1),
        medianMsPerCheckpoint: round(percentile(periods, 50)),
        p99MsPerCheckpoint: round(percentile(periods, 99)),
        statementsPerCheckpoint: round(sql.statements / checkpoints),
        commitsPerCheckpoint: round(sql.commits / checkpoints),
      };
    });
    await emit('resumable', { rows: ROWS, rowsPerRun: perRun, pageSize: 100 }, runs);
  } finally {
    unwatch();
    await harness.close();
  }
});
