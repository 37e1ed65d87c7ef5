import type { DataSource } from 'typeorm';
import { SignalEntity, StepExecutionEntity, WorkflowEntity } from '../lib';
import { qualifiedTable } from './support/dataset';

/** What the generated data holds, for assertions. */
export interface HousekeepingDataset {
  executions: number;
  workflows: number;
  /** in_progress rows started 2 hours ago (the rest of the in_progress rows are seconds old). */
  stuckInProgress: number;
  /** scheduled rows due an hour ago (the rest are due from 10 minutes ago to 2 hours ahead). */
  stuckScheduled: number;
  /** waiting rows past their `wait_deadline_at` (the rest are due in 21-30 days). */
  overdueWaits: number;
  /** finished workflows transitioned 40 days ago, and their executions. */
  oldFinishedWorkflows: number;
  oldFinishedExecutions: number;
  /** the signals of those workflows (ten each). */
  oldFinishedSignals: number;
  generateMs: number;
}

/** The registered name the generated workflows carry. */
export const BENCH_WORKFLOW_TYPE = 'HousekeepingBenchWorkflow';

/**
 * Fills the engine's tables (empty, migrated) with `executions` step executions, ten per
 * workflow, each with one `INSERT ... SELECT generate_series` statement, then ANALYZEs them.
 * 90% of the executions are completed; the newest execution of each workflow is, by workflow
 * number w (w % 20): 0-9 in_progress (stuck when w % 2000 = 0), 10-17 scheduled (stuck when
 * w % 2000 = 10), 18 waiting (waiting 0-9 days), 19 completed with its workflow finished
 * (transitioned 40 days ago when w % 200 = 19, else a day ago). Ids are md5-derived UUIDs. The
 * indexes and foreign keys are put back once the rows are in (`setAsideIndexesAndForeignKeys`).
 */
export async function generateHousekeepingDataset(
  dataSource: DataSource,
  executions: number,
): Promise<HousekeepingDataset> {
  const started = Date.now();
  const workflows = Math.ceil(executions / 10);
  const table = (
    entity: typeof WorkflowEntity | typeof StepExecutionEntity | typeof SignalEntity,
  ) => qualifiedTable(dataSource, entity);
  const restore = await setAsideIndexesAndForeignKeys(dataSource, [
    table(WorkflowEntity),
    table(StepExecutionEntity),
    table(SignalEntity),
  ]);
  await dataSource.query(
    `INSERT INTO ${table(WorkflowEntity)}
       (id, type, hero_type, hero_id, state, current_step_name, next_step_name, allow_multiple,
        transitioned_at, metadata, created_at, updated_at)
     SELECT md5('w' || w)::uuid, $1, NULL, NULL,
       CASE WHEN w % 20 < 10 THEN 'performing' WHEN w % 20 < 19 THEN 'ready' ELSE 'finished' END,
       CASE WHEN w % 20 < 10 THEN 'step' END,
       CASE WHEN w % 20 < 19 THEN 'step' END,
       true,
       CASE WHEN w % 200 = 19 THEN now() - interval '40 days' WHEN w % 20 = 19 THEN now() - interval '1 day' END,
       NULL, now() - interval '2 days', now()
     FROM generate_series(0, $2::int - 1) AS w`,
    [BENCH_WORKFLOW_TYPE, workflows],
  );
  await dataSource.query(
    `INSERT INTO ${table(StepExecutionEntity)}
       (id, workflow_id, step_name, state, outcome, scheduled_for, started_at, completed_at, finished_at,
        job_id, waiting_since, wait_deadline_at, created_at, updated_at)
     SELECT id, md5('w' || w)::uuid, 'step', state,
       CASE WHEN state = 'completed' THEN 'success' END,
       CASE
         WHEN state = 'scheduled' AND w % 2000 = 10 THEN now() - interval '1 hour'
         WHEN state = 'scheduled' THEN now() + ((w % 120) - 10) * interval '1 minute'
         ELSE now() - interval '2 days' + p * interval '1 second'
       END,
       CASE
         WHEN state = 'in_progress' AND w % 2000 = 0 THEN now() - interval '2 hours'
         WHEN state = 'in_progress' THEN now() - (w % 50) * interval '1 second'
         WHEN state = 'completed' THEN now() - interval '2 days' + p * interval '1 second'
       END,
       CASE WHEN state = 'completed' THEN now() - interval '2 days' + p * interval '1 second' END,
       CASE WHEN state = 'completed' THEN now() - interval '2 days' + p * interval '1 second' END,
       id::text,
       CASE WHEN state = 'waiting' THEN now() - (w % 10) * interval '1 day' END,
       CASE
         WHEN state = 'waiting' AND w % 2000 = 18 THEN now() - (w % 10) * interval '1 day' + interval '3 days'
         WHEN state = 'waiting' THEN now() - (w % 10) * interval '1 day' + interval '30 days'
       END,
       now() - interval '2 days' + p * interval '1 second',
       now()
     FROM (
       SELECT md5('e' || i)::uuid AS id, i / 10 AS w, i % 10 AS p,
         CASE
           WHEN i % 10 <> 9 THEN 'completed'
           WHEN (i / 10) % 20 < 10 THEN 'in_progress'
           WHEN (i / 10) % 20 < 18 THEN 'scheduled'
           WHEN (i / 10) % 20 = 18 THEN 'waiting'
           ELSE 'completed'
         END AS state
       FROM generate_series(0, $1::int - 1) AS i
     ) AS generated`,
    [executions],
  );
  // As many signals as executions: one in ten still pending (0-44 days old), the rest consumed.
  await dataSource.query(
    `INSERT INTO ${table(SignalEntity)}
       (id, workflow_id, name, idempotency_key, state, payload, claimed_at, consumed_at, claimed,
        consumed, created_at, updated_at)
     SELECT md5('s' || i)::uuid, md5('w' || (i / 10))::uuid, 'evt', NULL,
       CASE WHEN i % 10 = 0 THEN 'pending' ELSE 'consumed' END, NULL,
       CASE WHEN i % 10 <> 0 THEN now() - interval '2 days' END,
       CASE WHEN i % 10 <> 0 THEN now() - interval '2 days' END,
       CASE WHEN i % 10 = 0 THEN 0 ELSE 1 END,
       CASE WHEN i % 10 = 0 THEN 0 ELSE 1 END,
       now() - ((i / 10) % 45) * interval '1 day', now()
     FROM generate_series(0, $1::int - 1) AS i`,
    [executions],
  );
  await restore();
  await dataSource.query(`ANALYZE ${table(SignalEntity)}`);
  await dataSource.query(`ANALYZE ${table(WorkflowEntity)}`);
  await dataSource.query(`ANALYZE ${table(StepExecutionEntity)}`);
  const everyW = (predicate: (w: number) => boolean) => {
    let count = 0;
    for (let w = 0; w < workflows; w++) if (predicate(w) && w * 10 + 9 < executions) count++;
    return count;
  };
  const oldFinishedWorkflows = everyW((w) => w % 200 === 19);
  return {
    executions,
    workflows,
    stuckInProgress: everyW((w) => w % 2000 === 0),
    stuckScheduled: everyW((w) => w % 2000 === 10),
    overdueWaits: everyW((w) => w % 2000 === 18),
    oldFinishedWorkflows,
    oldFinishedExecutions: oldFinishedWorkflows * 10,
    oldFinishedSignals: oldFinishedWorkflows * 10,
    generateMs: Date.now() - started,
  };
}

/**
 * Drops the tables' foreign keys and secondary indexes and resolves the function that puts each
 * back from its own definition (`pg_get_constraintdef`, `pg_get_indexdef`), on one connection with
 * room to sort. Two million rows, each checked against its workflow and inserted into a dozen
 * B-trees, take twice as long as building those B-trees from the filled tables and validating each
 * foreign key in one pass; the tables end up with the same indexes and constraints. The primary
 * keys stay (dropping them too saved nothing measurable).
 */
async function setAsideIndexesAndForeignKeys(
  dataSource: DataSource,
  tables: readonly string[],
): Promise<() => Promise<void>> {
  const foreignKeys = await dataSource.query<Array<{ dropSql: string; addSql: string }>>(
    `SELECT format('ALTER TABLE %s DROP CONSTRAINT %I', conrelid::regclass, conname) AS "dropSql",
       format('ALTER TABLE %s ADD CONSTRAINT %I %s', conrelid::regclass, conname,
         pg_get_constraintdef(oid)) AS "addSql"
     FROM pg_constraint
     WHERE contype = 'f' AND conrelid = ANY ($1::text[]::regclass[])`,
    [tables],
  );
  const indexes = await dataSource.query<Array<{ dropSql: string; createSql: string }>>(
    `SELECT format('DROP INDEX %s', index.indexrelid::regclass) AS "dropSql",
       pg_get_indexdef(index.indexrelid) AS "createSql"
     FROM pg_index AS index
     WHERE index.indrelid = ANY ($1::text[]::regclass[])
       AND NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conindid = index.indexrelid)`,
    [tables],
  );
  for (const { dropSql } of [...foreignKeys, ...indexes]) await dataSource.query(dropSql);
  return async () => {
    const runner = dataSource.createQueryRunner();
    try {
      await runner.query(`SET maintenance_work_mem = '256MB'`);
      for (const { createSql } of indexes) await runner.query(createSql);
      for (const { addSql } of foreignKeys) await runner.query(addSql);
      await runner.query('RESET maintenance_work_mem');
    } finally {
      await runner.release();
    }
  };
}

/** One node of a PostgreSQL JSON plan. */
export interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
  [key: string]: unknown;
}

/** Every node of a plan, depth first. */
export function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

/** A compact one-line-per-node rendering of a plan. */
export function renderPlan(node: PlanNode, depth = 0): string[] {
  const relation = node['Relation Name'] ? ` on ${node['Relation Name']}` : '';
  const index = node['Index Name'] ? ` using ${node['Index Name']}` : '';
  return [
    `${'  '.repeat(depth)}${node['Node Type']}${index}${relation}`,
    ...(node.Plans ?? []).flatMap((child) => renderPlan(child, depth + 1)),
  ];
}

/** `EXPLAIN (ANALYZE, FORMAT JSON)` of a query; resolves the root plan and the execution time. */
export async function explainAnalyze(
  dataSource: DataSource,
  [sql, parameters]: [string, unknown[]],
): Promise<{ plan: PlanNode; executionMs: number }> {
  const rows = await dataSource.query<
    Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode; 'Execution Time': number }> }>
  >(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, parameters);
  const [{ Plan: plan, 'Execution Time': executionMs }] = rows[0]['QUERY PLAN'];
  return { plan, executionMs };
}
