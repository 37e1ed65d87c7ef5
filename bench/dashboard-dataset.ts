import type { DataSource } from 'typeorm';
import { SignalEntity, StepExecutionEntity, WorkflowEntity } from '../lib';
import { qualifiedTable } from './support/dataset';

/** Workflow classes, their hero types and their share of the workflows (percent, summing to 100). */
export const DASHBOARD_CLASSES = [
  { type: 'OrderFulfillmentWorkflow', heroType: 'Order', percent: 40 },
  { type: 'InvoiceReminderWorkflow', heroType: 'Invoice', percent: 25 },
  { type: 'CustomerOnboardingWorkflow', heroType: 'Customer', percent: 18 },
  { type: 'SubscriptionRenewalWorkflow', heroType: 'Subscription', percent: 12 },
  { type: 'DataExportWorkflow', heroType: 'Customer', percent: 4 },
  { type: 'AccountDeletionWorkflow', heroType: 'Customer', percent: 1 },
] as const;

/** The step of each execution, by its position in the workflow (modulo the list). */
export const DASHBOARD_STEPS = [
  'validate',
  'reserve',
  'charge',
  'notify',
  'ship',
  'track',
  'confirm',
  'invoice',
  'archive',
  'close',
] as const;

/** How far back the oldest workflow was created (the newest: an hour ago). */
const SPAN_DAYS = 180;
/** Workflows generated per round of statements: a chunk's rows, not the whole table, per transaction. */
const CHUNK = 50_000;

/** One generated workflow, as the benchmark needs it for its requests. */
export interface DashboardSample {
  id: string;
  type: string;
  heroType: string;
  heroId: string;
  createdAt: Date;
}

/** What was generated, and where the benchmark points its requests. */
export interface DashboardDataset {
  workflows: number;
  executions: number;
  signals: number;
  /** Workflows per state. */
  states: Record<string, number>;
  /** A workflow with signals and a failed attempt, near the middle of the list. */
  timelineWorkflow: DashboardSample;
  /** The workflow half way down the list (the deep keyset page starts after it). */
  middleWorkflow: DashboardSample;
  /** Building the rows; ANALYZE and VACUUM after them. */
  generateMs: number;
  vacuumMs: number;
}

/*
 * The generated workflows, one per w in [$1, $2), numbered oldest first; $3 is the total. Each
 * derived column is a pure function of w, so the three INSERTs of a chunk (and the lookups of
 * samples) agree without reading the rows back:
 *   - created_at: evenly spread over SPAN_DAYS ($4 the first instant, $5 ms apart), ms precision
 *     as the library writes it; the id is a UUIDv7 of that instant, as the library's ids are.
 *   - class c: by w % 100, in DASHBOARD_CLASSES' shares ($6 the names, $7 their hero types);
 *     hero ids repeat every $3 / 4 + 1 workflows, so a hero has up to four workflows.
 *   - state, by m (a hash of w into 0-99, independent of the class): the newest 5% are in flight
 *     (30% ready with a scheduled execution, 20% ready parked for a signal, 10% performing, 5%
 *     paused, 30% finished, 5% canceled); older ones are finished but for 1% paused, 1% parked
 *     for weeks and 3% canceled.
 *   - `last_state`: the state of its last execution ($9 executions per workflow, a minute apart).
 *     The executions walk the step names $8 in order from a start that rotates with w (by
 *     `rotation`), so the workflows in flight are spread over every step.
 */
const WORKFLOW_ROWS = `
  SELECT g.*,
    (lpad(to_hex((extract(epoch FROM g.created_at) * 1000)::bigint), 12, '0') || '7'
      || substr(md5('w' || g.w), 1, 3) || '8' || substr(md5('w' || g.w), 4, 15))::uuid AS id,
    ($6::text[])[g.c] AS type,
    ($7::text[])[g.c] AS hero_type,
    (g.w % ($3::int / 4 + 1))::text AS hero_id,
    CASE g.last_state
      WHEN 'completed' THEN 'finished'
      WHEN 'canceled' THEN 'canceled'
      WHEN 'in_progress' THEN 'performing'
      WHEN 'waiting' THEN 'ready'
      ELSE CASE WHEN (g.recent AND g.m BETWEEN 60 AND 64) OR (NOT g.recent AND g.m = 0) THEN 'paused' ELSE 'ready' END
    END AS state,
    ($8::text[])[($9::int - 1 + g.rotation) % 10 + 1] AS last_step,
    g.created_at + $9::int * interval '1 minute' AS last_at
  FROM (
    SELECT s.*,
      CASE
        WHEN s.recent AND s.m < 30 THEN 'scheduled'
        WHEN s.recent AND s.m < 50 THEN 'waiting'
        WHEN s.recent AND s.m < 60 THEN 'in_progress'
        WHEN s.recent AND s.m < 65 THEN 'scheduled'
        WHEN s.recent AND s.m < 95 THEN 'completed'
        WHEN s.recent THEN 'canceled'
        WHEN s.m = 0 THEN 'scheduled'
        WHEN s.m < 4 THEN 'canceled'
        WHEN s.m = 4 THEN 'waiting'
        ELSE 'completed'
      END AS last_state
    FROM (
      SELECT w,
        CASE WHEN w % 100 < 40 THEN 1 WHEN w % 100 < 65 THEN 2 WHEN w % 100 < 83 THEN 3
             WHEN w % 100 < 95 THEN 4 WHEN w % 100 < 99 THEN 5 ELSE 6 END AS c,
        -- Knuth's multiplicative hash: spread over 0-99 at any size, independent of w % 100.
        (w::bigint * 2654435761 % 4294967296) * 100 / 4294967296 AS m,
        (w / 7) % 10 AS rotation,
        w >= $3::int - $3::int / 20 AS recent,
        date_trunc('milliseconds', $4::timestamptz + w * $5::float8 * interval '1 millisecond') AS created_at
      FROM generate_series($1::int, $2::int - 1) AS w
    ) AS s
  ) AS g`;

/** A workflow with a failed attempt (its second execution) every 50: w % 50 = 13. */
const FAILED_EVERY = 50;
const FAILED_AT = 13;
/** Two consumed signals on every tenth workflow: w % 10 = 3. */
const SIGNALED_EVERY = 10;
const SIGNALED_AT = 3;

/**
 * Fills the engine's tables (empty, migrated) with `workflows` workflows of
 * `executionsPerWorkflow` executions each (a minute apart, all completed but the last, which
 * follows the workflow's state; every 50th workflow's second execution failed with an error and
 * a backtrace) and two consumed signals on every tenth workflow, in rounds of INSERT ... SELECT
 * generate_series of CHUNK workflows. Then VACUUM ANALYZE, as autovacuum would leave a table of
 * this size. Progress goes to stderr.
 */
export async function generateDashboardDataset(
  dataSource: DataSource,
  workflows: number,
  executionsPerWorkflow: number,
): Promise<DashboardDataset> {
  const started = Date.now();
  const workflowsTable = qualifiedTable(dataSource, WorkflowEntity);
  const executionsTable = qualifiedTable(dataSource, StepExecutionEntity);
  const signalsTable = qualifiedTable(dataSource, SignalEntity);
  const end = started - 3_600_000;
  const first = new Date(end - SPAN_DAYS * 86_400_000);
  const spacingMs = (end - first.getTime()) / workflows;
  const parameters = (from: number, to: number) => [
    from,
    to,
    workflows,
    first,
    spacingMs,
    DASHBOARD_CLASSES.map((entry) => entry.type),
    DASHBOARD_CLASSES.map((entry) => entry.heroType),
    [...DASHBOARD_STEPS],
    executionsPerWorkflow,
  ];
  for (let from = 0; from < workflows; from += CHUNK) {
    const chunk = parameters(from, Math.min(workflows, from + CHUNK));
    await dataSource.query(
      `INSERT INTO ${workflowsTable}
         (id, type, hero_type, hero_id, state, current_step_name, next_step_name, allow_multiple,
          transitioned_at, metadata, created_at, updated_at)
       SELECT id, type, hero_type, hero_id, state,
         CASE WHEN state = 'performing' THEN last_step END,
         CASE WHEN state IN ('ready', 'paused') THEN last_step END,
         true,
         CASE WHEN state IN ('finished', 'canceled') THEN last_at END,
         NULL, created_at, COALESCE(CASE WHEN state IN ('finished', 'canceled') THEN last_at END, created_at)
       FROM (${WORKFLOW_ROWS}) AS wf`,
      chunk,
    );
    await dataSource.query(
      `INSERT INTO ${executionsTable}
         (id, workflow_id, step_name, state, outcome, scheduled_for, started_at, completed_at,
          failed_at, canceled_at, finished_at, error_class_name, error_message, error_backtrace,
          job_id, waiting_since, created_at, updated_at)
       SELECT e.id, wf.id, e.step_name, e.state,
         CASE e.state WHEN 'completed' THEN 'success' WHEN 'failed' THEN 'reattempted'
                      WHEN 'canceled' THEN 'canceled' END,
         e.at,
         CASE WHEN e.state IN ('completed', 'failed', 'in_progress') THEN e.at END,
         CASE WHEN e.state = 'completed' THEN e.at + interval '2 seconds' END,
         CASE WHEN e.state = 'failed' THEN e.at + interval '2 seconds' END,
         CASE WHEN e.state = 'canceled' THEN e.at END,
         CASE WHEN e.state IN ('completed', 'failed', 'canceled') THEN e.at + interval '2 seconds' END,
         CASE WHEN e.state = 'failed' THEN 'PaymentDeclinedError' END,
         CASE WHEN e.state = 'failed' THEN 'The card issuer declined the charge (code 51, insufficient funds).' END,
         CASE WHEN e.state = 'failed' THEN
           'PaymentDeclinedError: The card issuer declined the charge' || chr(10)
           || '    at PaymentGateway.charge (src/payments/gateway.ts:118:13)' || chr(10)
           || '    at ' || wf.type || '.' || e.step_name || ' (src/workflows/workflow.ts:42:5)' END,
         e.id::text,
         CASE WHEN e.state = 'waiting' THEN e.at END,
         e.at, e.at
       FROM (${WORKFLOW_ROWS}) AS wf
       CROSS JOIN LATERAL (
         SELECT p, at,
           (lpad(to_hex((extract(epoch FROM at) * 1000)::bigint), 12, '0') || '7'
             || substr(md5('e' || wf.w || '.' || p), 1, 3) || '8'
             || substr(md5('e' || wf.w || '.' || p), 4, 15))::uuid AS id,
           -- The failed attempt and its retry (the next execution) run the same step.
           ($8::text[])[(CASE WHEN failed THEN p + 1 ELSE p END + wf.rotation) % 10 + 1] AS step_name,
           CASE WHEN p = $9::int - 1 THEN wf.last_state WHEN failed THEN 'failed' ELSE 'completed' END AS state
         FROM (
           SELECT p, wf.created_at + p * interval '1 minute' AS at,
             wf.w % ${FAILED_EVERY} = ${FAILED_AT} AND p = 1 AND $9::int > 2 AS failed
           FROM generate_series(0, $9::int - 1) AS p
         ) AS positions
       ) AS e`,
      chunk,
    );
    await dataSource.query(
      `INSERT INTO ${signalsTable}
         (id, workflow_id, name, idempotency_key, state, payload, claimed_at, consumed_at, claimed,
          consumed, created_at, updated_at)
       SELECT
         (lpad(to_hex((extract(epoch FROM at) * 1000)::bigint), 12, '0') || '7'
           || substr(md5('s' || wf.w || '.' || k), 1, 3) || '8'
           || substr(md5('s' || wf.w || '.' || k), 4, 15))::uuid,
         wf.id, CASE k WHEN 0 THEN 'payment_confirmed' ELSE 'shipment_update' END,
         'evt-' || wf.w || '-' || k, 'consumed',
         json_build_object('reference', wf.hero_id, 'attempt', k + 1),
         at + interval '1 second', at + interval '1 second', 1, 1, at, at + interval '1 second'
       FROM (${WORKFLOW_ROWS}) AS wf
       CROSS JOIN LATERAL (
         SELECT k, wf.created_at + (90 + k * 120) * interval '1 second' AS at
         FROM generate_series(0, 1) AS k
       ) AS signal
       WHERE wf.w % ${SIGNALED_EVERY} = ${SIGNALED_AT}`,
      chunk,
    );
    const done = Math.min(workflows, from + CHUNK);
    if (done % (CHUNK * 4) === 0 || done === workflows) {
      const seconds = Math.round((Date.now() - started) / 1000);
      process.stderr.write(`dashboard dataset: ${done} / ${workflows} workflows, ${seconds} s\n`);
    }
  }
  const generateMs = Date.now() - started;
  for (const table of [workflowsTable, executionsTable, signalsTable]) {
    await dataSource.query(`VACUUM (ANALYZE) ${table}`);
  }
  const vacuumMs = Date.now() - started - generateMs;

  const sample = async (w: number): Promise<DashboardSample> => {
    const [row] = await dataSource.query<
      Array<{ id: string; type: string; hero_type: string; hero_id: string; created_at: Date }>
    >(
      `SELECT id, type, hero_type, hero_id, created_at FROM (${WORKFLOW_ROWS}) AS wf`,
      parameters(w, w + 1),
    );
    return {
      id: row.id,
      type: row.type,
      heroType: row.hero_type,
      heroId: row.hero_id,
      createdAt: row.created_at,
    };
  };
  const middle = Math.floor(workflows / 2);
  const timeline = middle - (middle % FAILED_EVERY) + FAILED_AT;
  const stateRows = await dataSource.query<Array<{ state: string; count: string }>>(
    `SELECT state, count(*) AS count FROM ${workflowsTable} GROUP BY state ORDER BY state`,
  );
  const [{ count: signals }] = await dataSource.query<Array<{ count: string }>>(
    `SELECT count(*) AS count FROM ${signalsTable}`,
  );
  return {
    workflows,
    executions: workflows * executionsPerWorkflow,
    signals: Number(signals),
    states: Object.fromEntries(stateRows.map((row) => [row.state, Number(row.count)])),
    timelineWorkflow: await sample(timeline < workflows ? timeline : FAILED_AT),
    middleWorkflow: await sample(middle),
    generateMs,
    vacuumMs,
  };
}
