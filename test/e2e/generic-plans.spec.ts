import { Step, Workflow } from '../../lib';
import { Order } from '../fixtures/order.entity';
import { MatcherWorkflow, PaymentWorkflow } from '../fixtures/signal.workflows';
import { StepScript } from '../fixtures/step-script';
import { testDatabase, testPooler } from './support/database';
import { describeIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { placeholdersOf } from './support/sql-text';
import { testTransport } from './support/transport';

@Workflow({ name: 'GenericPlanChainWorkflow', hero: () => Order })
class ChainWorkflow {
  @Step() first() {}
  @Step() second() {}
  @Step() third() {}
}

/** The executions a long workflow leaves behind, all finished. */
const HISTORY = 5_000;

/** One node of `EXPLAIN (FORMAT JSON)`, as far as this spec reads it. */
interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Cond'?: string;
  'Recheck Cond'?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/**
 * With `preparedStatements: true` PostgreSQL may run a named statement with a generic plan, built
 * once without its parameters' values. A state bound as a parameter reads as "any state" there:
 * on a workflow with thousands of finished executions the plan then walks all of them at every
 * step (a chained step's stray sweep did: 0.04 ms at the first step, 0.66 ms at the 3,000th).
 * Every statement the hot path sends about a workflow's executions must seek them by workflow
 * and state in its generic plan. The statements are the library's own, as recorded from a step
 * chain, a plain wake and a wake that runs a matcher; each is prepared at SQL level with
 * `plan_cache_mode = force_generic_plan` and explained over a table with statistics.
 */
// Named statements and SQL-level PREPARE live on one server session: not through a transaction
// pooler. The local transport runs no worker of its own here.
describeIf(testDatabase === 'postgres' && testPooler === null && testTransport !== 'local')(
  'generic plans of the hot path (PostgreSQL)',
  () => {
    let harness: EngineHarness;
    let statements: string[];

    beforeAll(async () => {
      harness = await EngineHarness.boot({
        workflows: [ChainWorkflow, PaymentWorkflow, MatcherWorkflow],
        providers: [StepScript],
        entities: [Order],
        options: { preparedStatements: true },
        // One connection: its `pg_prepared_statements` lists every statement the library named.
        extra: { max: 1 },
      });
      const orders = harness.dataSource.getRepository(Order);
      const chain = await harness.service.start(ChainWorkflow, {
        hero: await orders.save({ status: 'new' }),
      });
      await harness.waitForState(chain.id, 'finished');
      for (const type of [PaymentWorkflow, MatcherWorkflow]) {
        const workflow = await harness.service.start(type, {
          hero: await orders.save({ status: 'new' }),
        });
        await harness.waitForWorkflow(
          workflow.id,
          async () => (await harness.service.currentExecution(workflow.id))?.state === 'waiting',
        );
        await harness.service.signal(workflow.id, 'payment', { payload: { amount: 5 } });
        await harness.waitForState(workflow.id, 'finished');
      }
      const named = await harness.dataSource.query<Array<{ statement: string }>>(
        'SELECT statement FROM pg_prepared_statements WHERE NOT from_sql',
      );
      statements = named.map((row) => row.statement);
      const executions = `"${harness.schema}"."geneva_drive_step_executions"`;
      await harness.dataSource.query(
        `INSERT INTO ${executions} (id, workflow_id, step_name, state, outcome, scheduled_for,
           finished_at, completed_at, created_at, updated_at)
         SELECT gen_random_uuid(), $1, 'first', 'completed', 'success', now(), now(), now(),
           now(), now()
         FROM generate_series(1, $2::int)`,
        [chain.id, HISTORY],
      );
      await harness.dataSource.query(`ANALYZE ${executions}`);
    });
    afterAll(() => harness?.close());

    it("seeks a workflow's executions by workflow and state, never filtering them all", async () => {
      const byWorkflow = statements.filter(
        (statement) =>
          statement.includes('"geneva_drive_step_executions"') &&
          /"workflow_id" = \$\d/.test(statement),
      );
      // Not vacuous: the stray sweep of the chain and the matcher's read of parked steps are here.
      expect(byWorkflow.some((statement) => /^UPDATE .*"state" IN \(/.test(statement))).toBe(true);
      expect(
        byWorkflow.some((statement) => /^SELECT .*ORDER BY "created_at"/.test(statement)),
      ).toBe(true);
      const filtering: string[] = [];
      const runner = harness.dataSource.createQueryRunner();
      try {
        for (const statement of byWorkflow) {
          await runner.query('BEGIN');
          try {
            await runner.query('SET LOCAL plan_cache_mode = force_generic_plan');
            await runner.query(`PREPARE gd_generic_probe AS ${statement}`);
            const nulls = Array.from({ length: placeholdersOf(statement) }, () => 'NULL');
            const [{ 'QUERY PLAN': plans }] = (await runner.query(
              `EXPLAIN (FORMAT JSON) EXECUTE gd_generic_probe(${nulls.join(', ')})`,
            )) as Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>;
            const walksAll = nodesOf(plans[0].Plan).some(
              (node) =>
                node['Relation Name'] === 'geneva_drive_step_executions' &&
                (node['Node Type'] === 'Seq Scan' ||
                  (/\bstate\b/.test(node.Filter ?? '') &&
                    /workflow_id/.test(`${node['Index Cond']} ${node['Recheck Cond']}`))),
            );
            if (walksAll) filtering.push(statement);
          } finally {
            await runner.query('ROLLBACK');
            // PREPARE outlives a rolled-back transaction.
            await runner.query('DEALLOCATE ALL');
          }
        }
      } finally {
        await runner.release();
      }
      expect(filtering).toEqual([]);
    });
  },
);
