import type { QueryRunner } from 'typeorm';
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
  'Index Name'?: string;
  'Index Cond'?: string;
  'Recheck Cond'?: string;
  Filter?: string;
  Plans?: PlanNode[];
}

const nodesOf = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(nodesOf)];

/**
 * Whether a plan reads every execution of a workflow: a sequential scan of the table, or a seek by
 * workflow that leaves the state to a filter, unless the index holds only rows of the states asked
 * for (`partialOnState`: the names of indexes with a predicate on the state).
 */
function walksAllExecutions(plan: PlanNode, partialOnState: ReadonlySet<string>): boolean {
  return nodesOf(plan).some(
    (node) =>
      node['Relation Name'] === 'geneva_drive_step_executions' &&
      (node['Node Type'] === 'Seq Scan' ||
        (/\bstate\b/.test(node.Filter ?? '') &&
          /workflow_id/.test(`${node['Index Cond']} ${node['Recheck Cond']}`) &&
          !partialOnState.has(node['Index Name'] ?? ''))),
  );
}

/** `EXPLAIN (FORMAT JSON) EXECUTE name(NULL, …)`: the plan a prepared statement runs with. */
async function explainPrepared(
  runner: QueryRunner,
  name: string,
  statement: string,
): Promise<PlanNode> {
  const nulls = Array.from({ length: placeholdersOf(statement) }, () => 'NULL');
  const [{ 'QUERY PLAN': plans }] = (await runner.query(
    `EXPLAIN (FORMAT JSON) EXECUTE ${name}(${nulls.join(', ')})`,
  )) as Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>;
  return plans[0].Plan;
}

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
    /** The library's statements about a workflow's executions (`"workflow_id" = $n`). */
    let byWorkflow: string[];
    /** Indexes of the executions table with a predicate on the state. */
    let partialOnState: Set<string>;
    /** Those of `byWorkflow` whose plan, cached over the fresh tables, walks the history. */
    let walkingOnFreshPlans: string[];

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
      byWorkflow = statements.filter(
        (statement) =>
          statement.includes('"geneva_drive_step_executions"') &&
          /"workflow_id" = \$\d/.test(statement),
      );
      const partial = await harness.dataSource.query<Array<{ indexname: string }>>(
        `SELECT indexname FROM pg_indexes
         WHERE schemaname = $1 AND tablename = 'geneva_drive_step_executions'
           AND indexdef ~ 'WHERE .*\\mstate\\M'`,
        [harness.schema],
      );
      partialOnState = new Set(partial.map((row) => row.indexname));
      const executions = `"${harness.schema}"."geneva_drive_step_executions"`;
      // A connection keeps the generic plan it built over the fresh, never-analyzed tables until
      // something invalidates it (an ANALYZE): build one for each statement now, add the
      // history, and read the plan each still runs with.
      const runner = harness.dataSource.createQueryRunner();
      try {
        await runner.query('SET plan_cache_mode = force_generic_plan');
        for (const [index, statement] of byWorkflow.entries()) {
          await runner.query(`PREPARE gd_fresh_${index} AS ${statement}`);
          await explainPrepared(runner, `gd_fresh_${index}`, statement);
        }
        await runner.query(
          `INSERT INTO ${executions} (id, workflow_id, step_name, state, outcome, scheduled_for,
             finished_at, completed_at, created_at, updated_at)
           SELECT gen_random_uuid(), $1, 'first', 'completed', 'success', now(), now(), now(),
             now(), now()
           FROM generate_series(1, $2::int)`,
          [chain.id, HISTORY],
        );
        walkingOnFreshPlans = [];
        for (const [index, statement] of byWorkflow.entries()) {
          const plan = await explainPrepared(runner, `gd_fresh_${index}`, statement);
          if (walksAllExecutions(plan, partialOnState)) walkingOnFreshPlans.push(statement);
        }
      } finally {
        await runner.query('DEALLOCATE ALL');
        await runner.query('RESET plan_cache_mode');
        await runner.release();
      }
      await harness.dataSource.query(`ANALYZE ${executions}`);
    });
    afterAll(() => harness?.close());

    it("seeks a workflow's executions by workflow and state, never filtering them all", async () => {
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
            const plan = await explainPrepared(runner, 'gd_generic_probe', statement);
            if (walksAllExecutions(plan, partialOnState)) filtering.push(statement);
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

    it('keeps seeking them so with a plan built while the tables were new', () => {
      // A new app's first steps plan over near-empty tables that no ANALYZE has read yet; with
      // named statements each connection then keeps that plan while a workflow's history grows.
      expect(byWorkflow.length).toBeGreaterThan(0);
      expect(walkingOnFreshPlans).toEqual([]);
    });
  },
);
