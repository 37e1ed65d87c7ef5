/**
 * `npm run bench:housekeeping`: housekeeping on large tables, at each size of BENCH_EXECUTIONS
 * (step executions, default 100000,1000000), in a dedicated PostgreSQL schema dropped afterwards.
 * Each run fills the emptied tables with bulk SQL (housekeeping-dataset.ts), EXPLAIN ANALYZEs each
 * stuck-execution query (which must use its index and no Seq Scan on step executions), and times
 * a full `HousekeepingService.run()`. One JSON line per size, medians over BENCH_RUNS runs
 * (default 3), with the plans and the last run's result under `details`. Exits 1 when a query
 * does not use its index.
 */
import { performance } from 'node:perf_hooks';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { HousekeepingService, SignalEntity, StepExecutionEntity, WorkflowEntity } from '../lib';
import { HousekeepingQueries } from '../lib/adapters/typeorm/housekeeping-queries';
import type { StuckKind } from '../lib/ports/workflow.repository';
import { INDEX_NAMES } from '../lib/migrations/migration.constants';
import { GenevaDriveTestingModule } from '../lib/testing';
import { HousekeepingBenchWorkflow } from '../test/fixtures/housekeeping.workflows';
import { createSchema, dataSourceOptions, dropSchema } from '../test/e2e/support/database';
import {
  explainAnalyze,
  generateHousekeepingDataset,
  planNodes,
  renderPlan,
} from './housekeeping-dataset';
import { qualifiedTable } from './support/dataset';
import { envIntegers, runCount } from './support/env';
import { runBenchmark } from './support/main';
import { emit, repeatRuns } from './support/result';
import { round } from './support/stats';

const SIZES = envIntegers('BENCH_EXECUTIONS', [100_000, 1_000_000]);
const INDEX_OF: Record<StuckKind, string> = {
  in_progress: INDEX_NAMES.stepExecutionsInProgressStartedAt,
  scheduled: INDEX_NAMES.stepExecutionsScheduled,
};
const CUTOFF_MS: Record<StuckKind, number> = { in_progress: 3_600_000, scheduled: 900_000 };

interface QueryCheck {
  index: string;
  usesIndex: boolean;
  seqScanOnStepExecutions: boolean;
  executionMs: number;
  sql: string;
  plan: string[];
}

/** EXPLAIN ANALYZE of the queries's page query for `kind`. */
async function checkQuery(
  dataSource: DataSource,
  queries: HousekeepingQueries,
  kind: StuckKind,
): Promise<QueryCheck> {
  const query = queries.stuckQuery(
    dataSource.manager,
    kind,
    new Date(Date.now() - CUTOFF_MS[kind]),
    1000,
  );
  const [sql, parameters] = query.getQueryAndParameters();
  const { plan, executionMs } = await explainAnalyze(dataSource, [sql, parameters]);
  const nodes = planNodes(plan);
  return {
    index: INDEX_OF[kind],
    usesIndex: nodes.some((node) => node['Index Name'] === INDEX_OF[kind]),
    seqScanOnStepExecutions: nodes.some(
      (node) =>
        node['Node Type'] === 'Seq Scan' &&
        node['Relation Name'] === 'geneva_drive_step_executions',
    ),
    executionMs,
    sql,
    plan: renderPlan(plan),
  };
}

/** Every run of one size; resolves whether every query used its index. */
async function measure(executions: number): Promise<boolean> {
  const schema = await createSchema('gd_bench');
  const moduleRef = await Test.createTestingModule({
    imports: [TypeOrmModule.forRoot(dataSourceOptions(schema)), GenevaDriveTestingModule.forRoot()],
    providers: [HousekeepingBenchWorkflow],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  try {
    await app.init();
    const dataSource = app.get(DataSource);
    const queries = app.get(HousekeepingQueries, { strict: false });
    const tables = [WorkflowEntity, StepExecutionEntity, SignalEntity].map((entity) =>
      qualifiedTable(dataSource, entity),
    );
    let ok = true;
    let details: Record<string, unknown> = {};
    const runs = await repeatRuns(runCount(), async () => {
      await dataSource.query(`TRUNCATE ${tables.join(', ')}`);
      const dataset = await generateHousekeepingDataset(dataSource, executions);
      const inProgress = await checkQuery(dataSource, queries, 'in_progress');
      const scheduled = await checkQuery(dataSource, queries, 'scheduled');
      ok &&= [inProgress, scheduled].every(
        (check) => check.usesIndex && !check.seqScanOnStepExecutions,
      );
      const started = performance.now();
      const result = await app.get(HousekeepingService).run();
      const runMs = performance.now() - started;
      details = { queries: { in_progress: inProgress, scheduled }, result, expected: dataset };
      return {
        runMs: round(runMs, 1),
        inProgressQueryMs: round(inProgress.executionMs),
        scheduledQueryMs: round(scheduled.executionMs),
        generateMs: dataset.generateMs,
      };
    });
    await emit(
      'housekeeping',
      { executions, workflows: Math.ceil(executions / 10) },
      runs,
      details,
    );
    return ok;
  } finally {
    await app.close();
    await dropSchema(schema);
  }
}

runBenchmark(async () => {
  let ok = true;
  for (const executions of SIZES) ok = (await measure(executions)) && ok;
  return ok;
});
