import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  explainAnalyze,
  planNodes,
  renderPlan,
  type PlanNode,
} from '../../bench/housekeeping-dataset';
import { TypeOrmWorkflowRepository } from '../../lib/adapters/typeorm/typeorm-workflow.repository';
import {
  INDEX_NAMES,
  STEP_EXECUTIONS_TABLE,
  WORKFLOWS_TABLE,
} from '../../lib/migrations/migration.constants';
import type { WorkflowSearchPage, WorkflowSearchQuery } from '../../lib/ports/workflow.repository';
import { GenevaDriveTestingModule } from '../../lib/testing';
import { createSchema, dataSourceOptions, dropSchema } from './support/database';
import { describeOn } from './support/describe-if';

const WORKFLOWS = 200_000;

// Query plans are PostgreSQL's: this runs in the PostgreSQL e2e run only.
describeOn('postgres')(
  `dashboard list queries use their indexes (PostgreSQL, ${WORKFLOWS} workflows)`,
  () => {
    let schema: string;
    let app: INestApplication;
    let dataSource: DataSource;
    let repository: TypeOrmWorkflowRepository;

    beforeAll(async () => {
      schema = await createSchema('gd_dash_explain');
      const moduleRef = await Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot(dataSourceOptions(schema)),
          GenevaDriveTestingModule.forRoot(),
        ],
      }).compile();
      app = moduleRef.createNestApplication({ logger: false });
      await app.init();
      dataSource = app.get(DataSource);
      repository = app.get(TypeOrmWorkflowRepository, { strict: false });
      // One statement: a minute apart, five classes, states spread (mostly finished, as in life),
      // the ongoing ones at one of seven steps.
      await dataSource.query(
        `INSERT INTO "${schema}".${WORKFLOWS_TABLE}
         (id, type, hero_type, hero_id, state, next_step_name, allow_multiple, created_at, updated_at)
       SELECT gen_random_uuid(), 'Class' || (n % 5), 'Order', n::text,
              CASE WHEN n % 50 = 0 THEN 'paused' WHEN n % 10 = 0 THEN 'ready' ELSE 'finished' END,
              CASE WHEN n % 10 = 0 THEN 'step' || (n % 7) END,
              true, date_trunc('milliseconds', now() - n * interval '1 minute'), now()
         FROM generate_series(1, $1::int) AS n`,
        [WORKFLOWS],
      );
      // One in twenty of the ongoing ones (0.5% of all) parked on a signal since its creation.
      await dataSource.query(
        `INSERT INTO "${schema}".${STEP_EXECUTIONS_TABLE}
         (id, workflow_id, step_name, state, scheduled_for, waiting_since, created_at, updated_at)
       SELECT gen_random_uuid(), id, next_step_name, 'waiting', created_at, created_at, created_at, now()
         FROM "${schema}".${WORKFLOWS_TABLE} WHERE next_step_name IS NOT NULL AND hero_id::int % 200 = 0`,
      );
      await dataSource.query(`ANALYZE "${schema}".${WORKFLOWS_TABLE}`);
      await dataSource.query(`ANALYZE "${schema}".${STEP_EXECUTIONS_TABLE}`);
    }, 120_000);

    afterAll(async () => {
      await app?.close();
      if (schema) await dropSchema(schema);
    });

    /**
     * The page's plan reads `indexes` and never the whole table; unless `sorts` (a lookup of a
     * few rows by id sorts them), it reads its rows in list order from the index, no Sort.
     * Resolves the plan's nodes.
     */
    async function expectIndexUse(
      filter: WorkflowSearchQuery,
      page: WorkflowSearchPage,
      index: string | string[],
      { sorts = false } = {},
    ): Promise<PlanNode[]> {
      const { plan } = await explainAnalyze(
        dataSource,
        repository.searchPageQuery(filter, page).getQueryAndParameters(),
      );
      const nodes = planNodes(plan);
      const rendered = renderPlan(plan).join('\n');
      for (const name of [index].flat()) {
        expect([rendered, nodes.some((node) => node['Index Name'] === name)]).toEqual([
          rendered,
          true,
        ]);
      }
      expect(
        nodes.filter(
          (node) =>
            node['Node Type'] === 'Seq Scan' &&
            [WORKFLOWS_TABLE, STEP_EXECUTIONS_TABLE].includes(node['Relation Name'] ?? ''),
        ),
      ).toEqual([]);
      if (!sorts) expect(nodes.some((node) => node['Node Type'] === 'Sort')).toBe(false);
      return nodes;
    }

    /** The rows the plan's scans read and threw away. */
    const rowsRemoved = (nodes: PlanNode[]) =>
      nodes.reduce((sum, node) => sum + Number(node['Rows Removed by Filter'] ?? 0), 0);

    it('the unfiltered list, first and later pages: an index scan on (created_at, id)', async () => {
      const [middle] = await repository.searchWorkflows({}, { limit: 1, after: undefined });
      await expectIndexUse({}, { limit: 51 }, INDEX_NAMES.workflowsCreated);
      const after = { createdAt: new Date(middle.createdAt.getTime() - 86_400_000), id: middle.id };
      await expectIndexUse({}, { limit: 51, after }, INDEX_NAMES.workflowsCreated);
    });

    it('the list of one state, first and later pages: an index scan on (state, created_at, id)', async () => {
      const [first] = await repository.searchWorkflows({ states: ['paused'] }, { limit: 1 });
      await expectIndexUse(
        { states: ['paused'] },
        { limit: 51 },
        INDEX_NAMES.workflowsStateCreated,
      );
      await expectIndexUse(
        { states: ['paused'] },
        { limit: 51, after: { createdAt: first.createdAt, id: first.id } },
        INDEX_NAMES.workflowsStateCreated,
      );
    });

    it('a page deep in the list starts at its cursor in the index: it reads no newer row', async () => {
      const [deep] = await repository.searchWorkflows(
        { createdBefore: new Date(Date.now() - (WORKFLOWS / 2) * 60_000) },
        { limit: 1 },
      );
      const after = { createdAt: deep.createdAt, id: deep.id };
      const nodes = await expectIndexUse({}, { limit: 51, after }, INDEX_NAMES.workflowsCreated);
      expect(rowsRemoved(nodes)).toBeLessThanOrEqual(1);
      const paused = await expectIndexUse(
        { states: ['paused'] },
        { limit: 51, after },
        INDEX_NAMES.workflowsStateCreated,
      );
      expect(rowsRemoved(paused)).toBeLessThanOrEqual(1);
    });

    it('the search box: a hero id of any hero type by its own index, a workflow id by the key', async () => {
      await expectIndexUse({ text: '4711' }, { limit: 51 }, INDEX_NAMES.workflowsHeroId, {
        sorts: true,
      });
      const [some] = await repository.searchWorkflows({}, { limit: 1 });
      const nodes = await expectIndexUse(
        { text: some.id },
        { limit: 51 },
        INDEX_NAMES.workflowsHeroId,
        { sorts: true },
      );
      // TypeORM names the primary key.
      expect(nodes.some((node) => node['Index Name']?.startsWith('PK_'))).toBe(true);
    });

    // No index on the step (GenevaDriveLeanStepWrites1764400009000 dropped it, so a step's
    // workflow UPDATE writes no index entry): a page walks the list in order until it is full.
    it('the step filter, first and later pages: the (created_at, id) list read in order, from the cursor on', async () => {
      const [first] = await repository.searchWorkflows({ stepName: 'step3' }, { limit: 1 });
      await expectIndexUse({ stepName: 'step3' }, { limit: 51 }, INDEX_NAMES.workflowsCreated);
      const nodes = await expectIndexUse(
        { stepName: 'step3' },
        { limit: 51, after: { createdAt: first.createdAt, id: first.id } },
        INDEX_NAMES.workflowsCreated,
      );
      // One ongoing workflow in ten is at one of seven steps: a page of 51 reads about 3,600 rows,
      // none of them newer than the cursor.
      expect(rowsRemoved(nodes)).toBeLessThan(51 * 70 * 1.5);
    });

    it('waiting longer than: step executions reached through an index only', async () => {
      const { plan } = await explainAnalyze(
        dataSource,
        repository
          .searchPageQuery(
            { waitingSinceBefore: new Date(Date.now() - 30 * 86_400_000) },
            { limit: 51 },
          )
          .getQueryAndParameters(),
      );
      const rendered = renderPlan(plan).join('\n');
      // Which index depends on the sizes: here each listed workflow is probed on
      // (workflow_id, state); at 1M workflows and 10M executions (npm run bench:dashboard) the
      // parked rows come from the partial waiting_since index.
      const onExecutions = planNodes(plan)
        .filter((node) => node['Relation Name'] === STEP_EXECUTIONS_TABLE)
        .map((node) => node['Node Type']);
      expect([rendered, onExecutions.length > 0]).toEqual([rendered, true]);
      expect([rendered, onExecutions.filter((type) => !/Index|Bitmap Heap/.test(type))]).toEqual([
        rendered,
        [],
      ]);
      expect(planNodes(plan).some((node) => node['Node Type'] === 'Seq Scan')).toBe(false);
    });
  },
);
