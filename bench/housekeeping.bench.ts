/**
 * `npm run bench:housekeeping`: the housekeeping queries on a large table (1M step executions by
 * default; BENCH_EXECUTIONS overrides), in a dedicated PostgreSQL schema dropped afterwards.
 * Prints JSON: the EXPLAIN ANALYZE plan and timing of each stuck-execution query (which must use
 * its index and no Seq Scan on step executions), and the duration and result of a full
 * `HousekeepingService.run()`. Exits 1 when a query does not use its index.
 */
import 'reflect-metadata';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { HousekeepingService } from '../lib';
import {
  StuckExecutionRecoverer,
  type StuckKind,
} from '../lib/housekeeping/stuck-execution.recoverer';
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

const INDEX_OF: Record<StuckKind, string> = {
  in_progress: INDEX_NAMES.stepExecutionsInProgressStartedAt,
  scheduled: INDEX_NAMES.stepExecutionsScheduled,
};
const CUTOFF_MS: Record<StuckKind, number> = { in_progress: 3_600_000, scheduled: 900_000 };

async function main(): Promise<boolean> {
  const executions = Number(process.env.BENCH_EXECUTIONS ?? 1_000_000);
  const schema = await createSchema('gd_bench');
  const moduleRef = await Test.createTestingModule({
    imports: [TypeOrmModule.forRoot(dataSourceOptions(schema)), GenevaDriveTestingModule.forRoot()],
    providers: [HousekeepingBenchWorkflow],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  try {
    await app.init();
    const dataSource = app.get(DataSource);
    const dataset = await generateHousekeepingDataset(dataSource, executions);
    const recoverer = app.get(StuckExecutionRecoverer, { strict: false });
    const queries: Record<string, unknown> = {};
    let ok = true;
    for (const kind of ['in_progress', 'scheduled'] as const) {
      const query = recoverer.stuckQuery(
        dataSource.manager,
        kind,
        new Date(Date.now() - CUTOFF_MS[kind]),
        1000,
      );
      const [sql, parameters] = query.getQueryAndParameters();
      const { plan, executionMs } = await explainAnalyze(dataSource, [sql, parameters]);
      const nodes = planNodes(plan);
      const usesIndex = nodes.some((node) => node['Index Name'] === INDEX_OF[kind]);
      const seqScanOnStepExecutions = nodes.some(
        (node) =>
          node['Node Type'] === 'Seq Scan' &&
          node['Relation Name'] === 'geneva_drive_step_executions',
      );
      ok &&= usesIndex && !seqScanOnStepExecutions;
      queries[kind] = {
        index: INDEX_OF[kind],
        usesIndex,
        seqScanOnStepExecutions,
        executionMs,
        sql,
        plan: renderPlan(plan),
      };
    }
    const started = Date.now();
    const result = await app.get(HousekeepingService).run();
    const runMs = Date.now() - started;
    process.stdout.write(
      `${JSON.stringify({ executions, workflows: dataset.workflows, generateMs: dataset.generateMs, queries, run: { ms: runMs, result, expected: dataset } }, null, 2)}\n`,
    );
    return ok;
  } finally {
    await app.close();
    await dropSchema(schema);
  }
}

main().then(
  (ok) => process.exit(ok ? 0 : 1),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
