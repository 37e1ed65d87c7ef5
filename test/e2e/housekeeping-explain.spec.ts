import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { HousekeepingService, StepExecutionEntity } from 'nestjs-geneva-drive';
import { GenevaDriveTestingModule } from 'nestjs-geneva-drive/testing';
import {
  explainAnalyze,
  generateHousekeepingDataset,
  planNodes,
  renderPlan,
  type HousekeepingDataset,
} from '../../bench/housekeeping-dataset';
import { HousekeepingQueries } from '../../lib/adapters/typeorm/housekeeping-queries';
import type { StuckKind } from '../../lib/ports/workflow.repository';
import { INDEX_NAMES } from '../../lib/migrations/migration.constants';
import { HousekeepingBenchWorkflow } from '../fixtures/housekeeping.workflows';
import { createSchema, dataSourceOptions, dropSchema } from './support/database';
import { describeOn } from './support/describe-if';

/**
 * The bar: one million step executions (generated in ~25 s on 2 cores). GD_EXPLAIN_EXECUTIONS
 * lowers it for a quick local run; `npm run bench:housekeeping` prints the plans and timings.
 */
const EXECUTIONS = Number(process.env.GD_EXPLAIN_EXECUTIONS ?? 1_000_000);

// Query plans are PostgreSQL's (EXPLAIN ANALYZE of the partial indexes): this runs in the
// PostgreSQL e2e run only.
describeOn('postgres')(
  `housekeeping queries use their indexes (PostgreSQL, ${EXECUTIONS} step executions)`,
  () => {
    let schema: string;
    let app: INestApplication;
    let dataSource: DataSource;
    let dataset: HousekeepingDataset;

    beforeAll(async () => {
      schema = await createSchema('gd_explain');
      const moduleRef = await Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot(dataSourceOptions(schema)),
          GenevaDriveTestingModule.forRoot(),
        ],
        providers: [HousekeepingBenchWorkflow],
      }).compile();
      app = moduleRef.createNestApplication({ logger: false });
      await app.init();
      dataSource = app.get(DataSource);
      dataset = await generateHousekeepingDataset(dataSource, EXECUTIONS);
    }, 120_000);

    afterAll(async () => {
      await app?.close();
      if (schema) await dropSchema(schema);
    });

    const cases: Array<[StuckKind, string, string]> = [
      ['in_progress', 'started_at', INDEX_NAMES.stepExecutionsInProgressStartedAt],
      ['scheduled', 'scheduled_for', INDEX_NAMES.stepExecutionsScheduled],
    ];

    it.each(cases)(
      'stuck %s: ordered by %s, served by %s, no Seq Scan on step executions',
      async (kind, _column, index) => {
        const queries = app.get(HousekeepingQueries, { strict: false });
        const cutoff = new Date(Date.now() - (kind === 'in_progress' ? 3_600_000 : 900_000));
        const firstPage = queries.stuckQuery(dataSource.manager, kind, cutoff, 1000);
        const rows = await firstPage.getMany();
        expect(rows).toHaveLength(
          kind === 'in_progress' ? dataset.stuckInProgress : dataset.stuckScheduled,
        );
        const pages = [
          firstPage,
          queries.stuckQuery(dataSource.manager, kind, cutoff, 1000, {
            at: kind === 'in_progress' ? rows[0].startedAt! : rows[0].scheduledFor,
            id: rows[0].id,
          }),
        ];
        for (const page of pages) {
          const { plan } = await explainAnalyze(dataSource, page.getQueryAndParameters());
          const nodes = planNodes(plan);
          const rendered = renderPlan(plan).join('\n');
          expect(nodes.some((node) => node['Index Name'] === index)).toBe(true);
          expect(
            nodes.filter(
              (node) =>
                node['Node Type'] === 'Seq Scan' &&
                node['Relation Name'] === 'geneva_drive_step_executions',
            ),
          ).toEqual([]);
          expect(rendered).toContain(`using ${index} on geneva_drive_step_executions`);
        }
      },
    );

    /** The plan's nodes, asserting `index` is used and no Seq Scan touches `table`. */
    async function expectIndexUse(
      query: { getQueryAndParameters(): [string, unknown[]] },
      index: string,
      table: string,
    ): Promise<void> {
      const { plan } = await explainAnalyze(dataSource, query.getQueryAndParameters());
      const nodes = planNodes(plan);
      expect(nodes.some((node) => node['Index Name'] === index)).toBe(true);
      expect(
        nodes.filter((node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === table),
      ).toEqual([]);
    }

    it('overdue waits: ordered by wait_deadline_at, served by its partial index', async () => {
      const queries = app.get(HousekeepingQueries, { strict: false });
      const firstPage = queries.overdueWaitsQuery(dataSource.manager, new Date(), 1000);
      const rows = await firstPage.getMany();
      expect(rows).toHaveLength(Math.min(1000, dataset.overdueWaits));
      const next = queries.overdueWaitsQuery(dataSource.manager, new Date(), 1000, {
        at: rows[0].waitDeadlineAt!,
        id: rows[0].id,
      });
      for (const page of [firstPage, next]) {
        await expectIndexUse(
          page,
          INDEX_NAMES.stepExecutionsWaitDeadline,
          'geneva_drive_step_executions',
        );
      }
    });

    it(`signal retention: the oldest pending signals of ${EXECUTIONS}, served by the partial index on created_at`, async () => {
      const queries = app.get(HousekeepingQueries, { strict: false });
      const cutoff = new Date(Date.now() - 30 * 86_400_000);
      const page = queries.pendingSignalsQuery(dataSource.manager, cutoff, 1000);
      expect(await page.getRawMany()).toHaveLength(1000);
      await expectIndexUse(page, INDEX_NAMES.signalsPendingCreated, 'geneva_drive_signals');
    });

    it('run() over the table cleans up and recovers exactly the stuck rows, quickly', async () => {
      const started = Date.now();
      const result = await app.get(HousekeepingService).run();
      const elapsed = Date.now() - started;
      expect(result).toEqual({
        workflowsCleanedUp: dataset.oldFinishedWorkflows,
        stepExecutionsCleanedUp: dataset.oldFinishedExecutions,
        signalsCleanedUp: dataset.oldFinishedSignals,
        stuckInProgressRecovered: dataset.stuckInProgress,
        stuckScheduledRecovered: dataset.stuckScheduled,
        signalsExpired: 0,
      });
      expect(
        await dataSource.getRepository(StepExecutionEntity).countBy({ outcome: 'recovered' }),
      ).toBe(dataset.stuckInProgress);
      expect(elapsed).toBeLessThan(10_000);
    });
  },
);
