import type { HousekeepingResult } from '../../../lib';
import type { ReliabilityHarness } from './reliability-harness';
import { sleep, waitUntil } from './wait';
import type { WorkerUsage } from './worker-process';

/** The shape of one overload run (the reliability suite's short one, the bench's longer one). */
export interface OverloadSettings {
  /** The worker child that runs every step. */
  worker: string;
  /** A workflow of the reliability fixtures, and its number of step bodies. */
  workflow: string;
  stepsPerWorkflow: number;
  /** How long (at the calibrated rate) the backlog of each capacity measurement takes to drain. */
  capacityMs: number;
  /** Workflows are started at `factor` × capacity for `windowMs`. */
  factor: number;
  windowMs: number;
  /** Housekeeping runs this often, from the overload window to the end of the drain. */
  housekeepingEveryMs: number;
  /** The drain must end within this. */
  drainTimeoutMs: number;
}

/** One sample of the backlog and what it costs. */
export interface OverloadSample {
  atMs: number;
  /** Jobs waiting, delayed, prioritized or active. */
  backlog: number;
  /** Completed and failed jobs BullMQ still keeps (`removeOnComplete`). */
  retained: number;
  redisKeys: number;
  workerRssMb: number;
}

/** A capacity measurement: a backlog of `steps` step bodies drained from a full queue. */
export interface CapacityMeasurement {
  steps: number;
  stepsPerSecond: number;
  workerCpuMsPerStep: number;
  latency: Percentiles;
}

export interface Percentiles {
  p50: number;
  p99: number;
}

export interface OverloadReport {
  capacity: { before: CapacityMeasurement; after: CapacityMeasurement; stepsPerSecond: number };
  offered: { steps: number; stepsPerSecond: number; ratioToCapacity: number };
  peakBacklog: number;
  samples: OverloadSample[];
  redisKeys: { baseline: number; peak: number; end: number; peakPerBacklogJob: number };
  workerRssMb: { baseline: number; peak: number; end: number };
  /** Step bodies (workflow, step) that ran more than once: must be 0. */
  duplicateBodies: number;
  /** Executions housekeeping gave a new job (their job id carries a `_n` suffix): must be 0. */
  housekeepingJobs: number;
  housekeeping: { runs: number; totals: HousekeepingResult; maxRunMs: number };
  latencyMs: { duringOverload: Percentiles; duringDrain: Percentiles; afterDrain: Percentiles };
  drain: {
    ms: number;
    steps: number;
    stepsPerSecond: number;
    ratioToCapacity: number;
    workerCpuMsPerStep: number;
  };
}

const MB = 1024 * 1024;

/**
 * The overload scenario: measure capacity (steps/s of a pre-started backlog drained by one worker),
 * start workflows at `factor` × that for a window with housekeeping every `housekeepingEveryMs`,
 * then stop starting and let the queue drain; measure capacity again on a small backlog. Every
 * figure comes from the database (the journal's commit times), Redis (DBSIZE, job counts) and the
 * worker (RSS, CPU): the worker is another process, so its diagnostics channels are out of reach.
 */
export async function runOverload(
  harness: ReliabilityHarness,
  settings: OverloadSettings,
  log: (line: string) => void = () => undefined,
): Promise<OverloadReport> {
  const usage = () => harness.pool.call<WorkerUsage>(settings.worker, { command: 'usage' });
  const steps = (workflows: number) => workflows * settings.stepsPerWorkflow;

  // A first short drain sizes the real measurements, so they last `capacityMs` on any machine.
  const calibration = await measureCapacity(harness, settings, 40, usage);
  const capacityWorkflows = Math.max(
    40,
    Math.round(
      (calibration.stepsPerSecond * settings.capacityMs) / 1000 / settings.stepsPerWorkflow,
    ),
  );
  const before = await measureCapacity(harness, settings, capacityWorkflows, usage);
  log(
    `capacity before: ${before.stepsPerSecond} steps/s over ${before.steps} steps (calibration ${calibration.stepsPerSecond})`,
  );

  const samples: OverloadSample[] = [];
  const baselineKeys = await redisKeys(harness);
  const baselineRss = (await usage()).rssBytes / MB;
  const startedAt = Date.now();
  const sample = async () => {
    const counts = await harness.queue.getJobCounts(
      'waiting',
      'delayed',
      'prioritized',
      'active',
      'completed',
      'failed',
    );
    samples.push({
      atMs: Date.now() - startedAt,
      backlog: counts.waiting + counts.delayed + counts.prioritized + counts.active,
      retained: counts.completed + counts.failed,
      redisKeys: await redisKeys(harness),
      workerRssMb: Math.round((await usage()).rssBytes / MB),
    });
  };
  const sampler = repeat(1_000, sample);
  const housekeeping = { runs: 0, maxRunMs: 0, totals: emptyResult() };
  const housekeeper = repeat(settings.housekeepingEveryMs, async () => {
    const runStartedAt = Date.now();
    const result = await harness.housekeeping.run();
    housekeeping.runs += 1;
    housekeeping.maxRunMs = Math.max(housekeeping.maxRunMs, Date.now() - runStartedAt);
    for (const key of Object.keys(result) as Array<keyof HousekeepingResult>)
      housekeeping.totals[key] += result[key];
  });

  // The window: start at the offered rate, as far as the control process keeps up.
  const workflowsPerSecond = (settings.factor * before.stepsPerSecond) / settings.stepsPerWorkflow;
  const overloadStart = new Date();
  const started: string[] = [];
  while (Date.now() - overloadStart.getTime() < settings.windowMs) {
    const due = Math.floor(((Date.now() - overloadStart.getTime()) / 1000) * workflowsPerSecond);
    const batch = Math.min(due - started.length, 50);
    if (batch <= 0) {
      await sleep(20);
      continue;
    }
    const ids = await harness.startWorkflows({ [settings.workflow]: batch });
    started.push(...ids.get(settings.workflow)!);
  }
  const stopAt = new Date();
  const offeredSeconds = (stopAt.getTime() - overloadStart.getTime()) / 1000;
  log(`offered ${steps(started.length)} steps in ${offeredSeconds} s; draining`);

  const cpuAtStop = (await usage()).cpuMicros;
  await waitUntil(
    `the ${started.length} workflows of the overload window to finish`,
    () => harness.allFinished(started),
    settings.drainTimeoutMs,
    200,
  );
  const cpuAtEnd = (await usage()).cpuMicros;
  await sampler.stop();
  await housekeeper.stop();
  await sample();

  const drained = await journalSpan(harness, started, stopAt);
  const after = await measureCapacity(harness, settings, capacityWorkflows, usage);
  log(`capacity after: ${after.stepsPerSecond} steps/s`);
  const capacity = Math.min(before.stepsPerSecond, after.stepsPerSecond);

  const peak = samples.reduce((max, s) => (s.backlog > max.backlog ? s : max), samples[0]);
  const peakKeys = Math.max(...samples.map((s) => s.redisKeys));
  const end = samples[samples.length - 1];
  return {
    capacity: { before, after, stepsPerSecond: capacity },
    offered: {
      steps: steps(started.length),
      stepsPerSecond: round(steps(started.length) / offeredSeconds),
      ratioToCapacity: round(steps(started.length) / offeredSeconds / before.stepsPerSecond, 2),
    },
    peakBacklog: peak.backlog,
    samples,
    redisKeys: {
      baseline: baselineKeys,
      peak: peakKeys,
      end: end.redisKeys,
      peakPerBacklogJob: round((peak.redisKeys - baselineKeys) / Math.max(1, peak.backlog), 2),
    },
    workerRssMb: {
      baseline: Math.round(baselineRss),
      peak: Math.max(...samples.map((s) => s.workerRssMb)),
      end: end.workerRssMb,
    },
    duplicateBodies: await duplicateBodies(harness),
    housekeepingJobs: await reenqueuedExecutions(harness),
    housekeeping,
    latencyMs: {
      duringOverload: await latency(harness, overloadStart, stopAt),
      duringDrain: await latency(harness, stopAt, new Date()),
      afterDrain: after.latency,
    },
    drain: {
      ms: Math.round(drained.seconds * 1000),
      steps: drained.steps,
      stepsPerSecond: round(drained.steps / drained.seconds),
      ratioToCapacity: round(drained.steps / drained.seconds / capacity, 2),
      workerCpuMsPerStep: round((cpuAtEnd - cpuAtStop) / 1000 / Math.max(1, drained.steps), 3),
    },
  };
}

/** Starts `workflows` at once, then drains them; steps/s counted from the last start on. */
async function measureCapacity(
  harness: ReliabilityHarness,
  settings: OverloadSettings,
  workflows: number,
  usage: () => Promise<WorkerUsage>,
): Promise<CapacityMeasurement> {
  const ids = (await harness.startWorkflows({ [settings.workflow]: workflows })).get(
    settings.workflow,
  )!;
  const from = new Date();
  const cpuFrom = (await usage()).cpuMicros;
  await waitUntil(
    `${workflows} workflows to finish (capacity)`,
    () => harness.allFinished(ids),
    120_000,
    100,
  );
  const cpuTo = (await usage()).cpuMicros;
  const { steps, seconds } = await journalSpan(harness, ids, from);
  return {
    steps,
    stepsPerSecond: round(steps / seconds),
    workerCpuMsPerStep: round((cpuTo - cpuFrom) / 1000 / Math.max(1, steps), 3),
    latency: await latency(harness, from, new Date(), ids),
  };
}

/** Bodies of `ids` that ran at or after `from`, and the seconds from `from` to the last one. */
async function journalSpan(
  harness: ReliabilityHarness,
  ids: string[],
  from: Date,
): Promise<{ steps: number; seconds: number }> {
  const [row] = await harness.dataSource.query<Array<{ steps: number; seconds: number | null }>>(
    `SELECT COUNT(*)::int AS steps, EXTRACT(EPOCH FROM MAX(at) - $2::timestamptz)::float8 AS seconds
       FROM reliability_journal WHERE workflow_id = ANY($1) AND at >= $2`,
    [ids, from],
  );
  return { steps: row.steps, seconds: Math.max(row.seconds ?? 0, 0.001) };
}

/** Time from an execution being due to its body's journal row, for bodies run in [from, to). */
async function latency(
  harness: ReliabilityHarness,
  from: Date,
  to: Date,
  ids: string[] | null = null,
): Promise<Percentiles> {
  const [row] = await harness.dataSource.query<Array<{ p: number[] | null }>>(
    `SELECT percentile_cont(ARRAY[0.5, 0.99]::float8[]) WITHIN GROUP (
              ORDER BY EXTRACT(EPOCH FROM j.at - e.scheduled_for) * 1000) AS p
       FROM reliability_journal j
       JOIN geneva_drive_step_executions e ON e.id = j.execution_id
      WHERE j.at >= $1 AND j.at < $2 AND ($3::uuid[] IS NULL OR j.workflow_id = ANY($3))`,
    [from, to, ids],
  );
  const [p50, p99] = row.p ?? [0, 0];
  return { p50: round(p50), p99: round(p99) };
}

/** (workflow, step) pairs whose body ran more than once. */
async function duplicateBodies(harness: ReliabilityHarness): Promise<number> {
  const [row] = await harness.dataSource.query<Array<{ count: number }>>(
    `SELECT COUNT(*)::int AS count FROM (
       SELECT 1 FROM reliability_journal GROUP BY workflow_id, step_name HAVING COUNT(*) > 1) twice`,
  );
  return row.count;
}

/**
 * Executions that got a second job: only housekeeping (recovery, reconciliation) re-enqueues in
 * this scenario, and a re-enqueue always moves `job_id` to `<id>_<n>`.
 */
async function reenqueuedExecutions(harness: ReliabilityHarness): Promise<number> {
  const [row] = await harness.dataSource.query<Array<{ count: number }>>(
    `SELECT COUNT(*)::int AS count FROM geneva_drive_step_executions WHERE job_id <> id::text`,
  );
  return row.count;
}

async function redisKeys(harness: ReliabilityHarness): Promise<number> {
  return Number((await harness.redis.cli('DBSIZE')).trim());
}

/** Runs `work` every `everyMs` (never two at once) until `stop()`, which awaits the one in hand. */
function repeat(everyMs: number, work: () => Promise<void>): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const at = Date.now();
      await work();
      const wait = everyMs - (Date.now() - at);
      for (let left = wait; left > 0 && !stopped; left -= 50) await sleep(Math.min(50, left));
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

function emptyResult(): HousekeepingResult {
  return {
    workflowsCleanedUp: 0,
    stepExecutionsCleanedUp: 0,
    signalsCleanedUp: 0,
    stuckInProgressRecovered: 0,
    stuckScheduledRecovered: 0,
    signalsExpired: 0,
  };
}

function round(value: number, digits = 1): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}
