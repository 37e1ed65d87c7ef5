/**
 * `npm run bench:sql`: the SQL the engine sends for one regular step (one job per step), one step
 * of a workflow whose steps a worker chains in one job, one checkpoint of a
 * resumable step, and one `signal()` that wakes a parked step (plus the woken step's own run),
 * counted through the DataSource's logger: round trips, statements, and transaction control
 * (BEGIN, COMMIT, ROLLBACK, savepoints) separately. Each is measured in isolation: the app runs no
 * worker and the benchmark runs each job itself as a worker would (`WorkflowRunner.performJob()`
 * with the data of the job BullMQ holds). One JSON line
 * (medians over BENCH_RUNS runs, default 3; the counts are deterministic), with each measured
 * operation's statements in order under `details`.
 */
import type { Type } from '@nestjs/common';
import type { Job } from 'bullmq';
import type { StepJobData } from '../lib/queue/step-job.interface';
import { ResumableStep, Step, Workflow, type IterableStep, type StepContext } from '../lib';
import { Order } from '../test/fixtures/order.entity';
import type { EngineHarness } from '../test/e2e/support/engine-harness';
import { parkedWorkflow } from './support/bench.workflows';
import { createOrders } from './support/dataset';
import { bootEngine } from './support/engine';
import { envInteger, runCount } from './support/env';
import { runBenchmark } from './support/main';
import { emit, repeatRuns, type Metrics } from './support/result';
import { SqlCounter, type SqlCount } from './support/sql-counter';

/** Items the resumable step walks, one checkpoint each (BENCH_CHECKPOINTS, default 200). */
const CHECKPOINTS = envInteger('BENCH_CHECKPOINTS', 200);

/** Three steps; the third waits an hour, so the second's job chains nothing. */
@Workflow({ name: 'SqlBenchChainWorkflow', hero: () => Order })
class SqlChainWorkflow {
  @Step() first() {}
  @Step() second() {}
  @Step({ wait: '1 hour' }) third() {}
}
/** Steps of the workflow a worker runs in one job, chained in process (below maxChainedSteps). */
const CHAINED_STEPS = 12;
let chainWindow: SqlCount | null = null;

/**
 * Steps a worker chains in one job; counts from the first step's body to the last's: that window
 * holds CHAINED_STEPS - 1 transitions (finish one step, start the next) and nothing else.
 */
@Workflow({ name: 'SqlBenchLongChainWorkflow', hero: () => Order })
class SqlLongChainWorkflow {
  @Step({ repeat: { times: CHAINED_STEPS } })
  tick(ctx: StepContext<Order>) {
    if (ctx.stepName === 'tick_1') counter.start();
    if (ctx.stepName === `tick_${CHAINED_STEPS}`) chainWindow = counter.stop();
  }
}
const SqlParkedWorkflow = parkedWorkflow('SqlBenchParkedWorkflow');
let counter: SqlCounter;
let checkpointWindow: SqlCount | null = null;

/**
 * Walks CHECKPOINTS in-memory items (no page reads), counting from the first item's body to the
 * last's: that window holds CHECKPOINTS - 1 checkpoints and nothing else.
 */
@Workflow({ name: 'SqlBenchResumableWorkflow', hero: () => Order })
class SqlResumableWorkflow {
  @ResumableStep({ maxIterations: 1_000_000 })
  async walk(iter: IterableStep<number>, _ctx: StepContext<Order>) {
    const items = Array.from({ length: CHECKPOINTS }, (_, index) => index);
    await iter.iterateOver(items, (index) => {
      if (index === 0) counter.start();
      if (index === CHECKPOINTS - 1) checkpointWindow = counter.stop();
    });
  }
}

/** Starts `workflow` for a new order; resolves its id and its first execution's id. */
async function start(
  harness: EngineHarness,
  workflow: Type<object>,
): Promise<{ id: string; executionId: string }> {
  const [hero] = await createOrders(harness.dataSource, 1);
  const { id } = await harness.service.start(workflow, { hero });
  return { id, executionId: await currentExecutionId(harness, id) };
}

async function currentExecutionId(harness: EngineHarness, workflowId: string): Promise<string> {
  const execution = await harness.service.currentExecution(workflowId);
  if (!execution) throw new Error(`Workflow ${workflowId} has no current execution.`);
  return execution.id;
}

/** Counts what `work` sends. */
async function count(work: () => Promise<unknown>): Promise<SqlCount> {
  counter.start();
  await work();
  return counter.stop();
}

/** The job BullMQ holds for the workflow's current execution (its current job id). */
async function queuedJob(harness: EngineHarness, workflowId: string): Promise<Job<StepJobData>> {
  const execution = await harness.service.currentExecution(workflowId);
  const job = execution?.jobId ? await harness.queue().getJob(execution.jobId) : undefined;
  if (!job) throw new Error(`Workflow ${workflowId} has no queued job for its current step.`);
  return job as Job<StepJobData>;
}

/** Runs `job` as a worker runs it: with the job's own data (workflow id, hero, pinned signal). */
function performJob(harness: EngineHarness, job: Job<StepJobData>): Promise<void> {
  return harness.runner.performJob(job.data, {
    queue: job.queueName,
    priority: job.opts.priority || undefined,
  });
}

/**
 * The middle step of a 3-step workflow (neither the first nor the last, the steady state), run
 * from its own job as a worker runs it; its successor waits, so nothing chains.
 */
async function regularStep(harness: EngineHarness): Promise<SqlCount> {
  const { id, executionId } = await start(harness, SqlChainWorkflow);
  await harness.runner.performStep(executionId);
  const job = await queuedJob(harness, id);
  return count(() => performJob(harness, job));
}

/** The workflow's first job, run as a worker runs it: its steps chained in process. */
async function chainedSteps(harness: EngineHarness): Promise<SqlCount> {
  chainWindow = null;
  const { id, executionId } = await start(harness, SqlLongChainWorkflow);
  await harness.runner.performJob(
    { stepExecutionId: executionId, workflowId: id },
    { queue: 'geneva-drive', priority: undefined },
  );
  if (!chainWindow) throw new Error('The chained workflow did not run its steps.');
  return chainWindow;
}

async function checkpoint(harness: EngineHarness): Promise<SqlCount> {
  checkpointWindow = null;
  await harness.runner.performStep((await start(harness, SqlResumableWorkflow)).executionId);
  if (!checkpointWindow) throw new Error('The resumable step did not walk its items.');
  return checkpointWindow;
}

/** `signal()` on a parked workflow, then the woken step's run. */
async function signalDelivery(
  harness: EngineHarness,
): Promise<{ signal: SqlCount; wokenStep: SqlCount }> {
  const { id, executionId } = await start(harness, SqlParkedWorkflow);
  await harness.runner.performStep(executionId);
  const parked = await harness.service.currentExecution(id);
  if (parked?.state !== 'waiting')
    throw new Error(`Workflow ${id} did not park (${parked?.state}).`);
  const signal = await count(() => harness.service.signal(id, 'go'));
  const job = await queuedJob(harness, id);
  return { signal, wokenStep: await count(() => performJob(harness, job)) };
}

function figures(prefix: string, sql: SqlCount, per = 1): Metrics {
  const ratio = (value: number) => Math.round((value / per) * 1000) / 1000;
  return {
    [`${prefix}Statements`]: ratio(sql.statements),
    [`${prefix}Commits`]: ratio(sql.commits),
    [`${prefix}Begins`]: ratio(sql.begins),
    [`${prefix}Rollbacks`]: ratio(sql.rollbacks),
    [`${prefix}Savepoints`]: ratio(sql.savepoints),
    [`${prefix}RoundTrips`]: ratio(sql.roundTrips),
  };
}

/** Each distinct query with how many times it was sent, most frequent first. */
function tally(log: string[]): Array<{ sql: string; times: number }> {
  const times = new Map<string, number>();
  for (const sql of log) times.set(sql, (times.get(sql) ?? 0) + 1);
  return [...times].map(([sql, n]) => ({ sql, times: n })).sort((a, b) => b.times - a.times);
}

runBenchmark(async () => {
  const harness = await bootEngine({
    workflows: [SqlChainWorkflow, SqlLongChainWorkflow, SqlParkedWorkflow, SqlResumableWorkflow],
    worker: false,
  });
  counter = SqlCounter.install(harness.dataSource);
  try {
    let last: Record<string, SqlCount> = {};
    const runs = await repeatRuns(runCount(), async () => {
      const regular = await regularStep(harness);
      const chained = await chainedSteps(harness);
      const checkpoints = await checkpoint(harness);
      const { signal, wokenStep } = await signalDelivery(harness);
      last = { regular, chained, checkpoints, signal, wokenStep };
      return {
        ...figures('regularStep', regular),
        ...figures('chainedStep', chained, CHAINED_STEPS - 1),
        ...figures('checkpoint', checkpoints, CHECKPOINTS - 1),
        ...figures('signal', signal),
        ...figures('wokenStep', wokenStep),
      };
    });
    await emit(
      'sql-per-step',
      { checkpointsCounted: CHECKPOINTS - 1, chainedSteps: CHAINED_STEPS },
      runs,
      {
        regularStep: last.regular.log,
        chainedJob: last.chained.log,
        checkpoint: tally(last.checkpoints.log),
        signal: last.signal.log,
        wokenStep: last.wokenStep.log,
      },
    );
  } finally {
    await harness.close();
  }
});
