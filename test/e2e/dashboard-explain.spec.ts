import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { explainAnalyze, planNodes, renderPlan } from '../../bench/housekeeping-dataset';
import { TypeOrmWorkflowRepository } from '../../lib/adapters/typeorm/typeorm-workflow.repository';
import { INDEX_NAMES, WORKFLOWS_TABLE } from '../../lib/migrations/migration.constants';
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
      // One statement: a minute apart, five classes, states spread (mostly finished, as in life).
      await dataSource.query(
        `INSERT INTO "${schema}".${WORKFLOWS_TABLE}
         (id, type, hero_type, hero_id, state, allow_multiple, created_at, updated_at)
       SELECT gen_random_uuid(), 'Class' || (n % 5), 'Order', n::text,
              CASE WHEN n % 50 = 0 THEN 'paused' WHEN n % 10 = 0 THEN 'ready' ELSE 'finished' END,
              true, now() - n * interval '1 minute', now()
         FROM generate_series(1, $1::int) AS n`,
        [WORKFLOWS],
      );
      await dataSource.query(`ANALYZE "${schema}".${WORKFLOWS_TABLE}`);
    }, 120_000);

    afterAll(async () => {
      await app?.close();
      if (schema) await dropSchema(schema);
    });

    async function expectIndexUse(
      filter: WorkflowSearchQuery,
      page: WorkflowSearchPage,
      index: string,
    ): Promise<void> {
      const { plan } = await explainAnalyze(
        dataSource,
        repository.searchPageQuery(filter, page).getQueryAndParameters(),
      );
      const nodes = planNodes(plan);
      const rendered = renderPlan(plan).join('\n');
      expect([rendered, nodes.some((node) => node['Index Name'] === index)]).toEqual([
        rendered,
        true,
      ]);
      expect(
        nodes.filter(
          (node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === WORKFLOWS_TABLE,
        ),
      ).toEqual([]);
      expect(nodes.some((node) => node['Node Type'] === 'Sort')).toBe(false);
    }

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
  },
);
