/**
 * `npm run bench:statement-cost`: what PostgreSQL spends on each statement of a chained step, as
 * the library sends it, run as the unnamed statement (the default: parsed and planned every time)
 * and as a named one (`preparedStatements: true`: parsed once, its plan cached). One connection,
 * in a transaction rolled back at the end; BENCH_STATEMENTS rows (default 2000), each statement
 * shape run once per row in round trips of 100; the figure is the CPU time of that connection's
 * backend (`/proc`) per statement, in microseconds. CPU time, not wall time: other load on the
 * machine slows it far less.
 * Then the same statements inside PL/pgSQL functions called as unnamed statements: the design a
 * migration could install to get cached plans behind a transaction-mode pooler (see
 * FUNCTION_GROUPS).
 */
import { readFileSync } from 'node:fs';
import type { QueryRunner } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import type { BoundStatement } from '../lib/adapters/postgres/bound-statement.interface';
import { runPipelined, type PgClient } from '../lib/adapters/postgres/postgres-pipeline';
import { createPostgresBatchContext } from '../lib/adapters/postgres/postgres-query-batch';
import { PostgresStatementNames } from '../lib/adapters/postgres/postgres-statement-names';
import { newExecutionRow, newWorkflowRow } from '../lib/entities/new-rows';
import { terminalTransition } from '../lib/scheduling/execution-transitions';
import { bootEngine } from './support/engine';
import { envInteger, runCount } from './support/env';
import { runBenchmark } from './support/main';
import { emit, repeatRuns, type Metrics } from './support/result';
import { round } from './support/stats';

const ROWS = envInteger('BENCH_STATEMENTS', 2000);
const PER_ROUND_TRIP = 100;

/**
 * The chained step's statements grouped as functions would take them: each lock alone (the runner
 * reads its row before deciding), the four writes in one call (sent together with the COMMIT).
 * PostgreSQL caches the plans of a PL/pgSQL function's statements per connection, so only the
 * outer call (`SELECT … FROM f($1, …)`, the unnamed statement) is parsed and planned each time,
 * and nothing named stays on the connection.
 */
const FUNCTION_GROUPS = {
  lockWorkflow: ['lockWorkflow'],
  lockExecution: ['lockExecution'],
  writes: ['completeExecution', 'sweep', 'insertExecution', 'updateWorkflow'],
} as const;

runBenchmark(async () => {
  const harness = await bootEngine({ workflows: [], worker: false });
  const runner = harness.dataSource.createQueryRunner();
  try {
    const client = (await runner.connect()) as PgClient;
    const [{ pid }] = (await runner.query('SELECT pg_backend_pid() AS pid')) as Array<{
      pid: number;
    }>;
    const { tables } = createPostgresBatchContext(harness.dataSource, false, () => ({
      resumable: true,
      signals: true,
      waitTimeouts: true,
      workflowContext: true,
    }));
    const now = new Date();
    const workflows = Array.from({ length: ROWS }, () =>
      newWorkflowRow(
        uuidv7(),
        { type: 'Bench', heroType: null, heroId: null, allowMultiple: true, metadata: null },
        now,
      ),
    );
    const executions = workflows.map((workflow) =>
      newExecutionRow(
        uuidv7(),
        { workflowId: workflow.id, stepName: 'first', scheduledFor: now, state: 'in_progress' },
        now,
      ),
    );
    /** The statements of a chained step (bench:sql's chainedJob), for row `i`. */
    const shapes: Record<string, (i: number) => BoundStatement> = {
      lockWorkflow: (i) => tables.workflows.selectById(workflows[i].id, true),
      lockExecution: (i) => tables.executions.selectById(executions[i].id, true),
      completeExecution: (i) =>
        tables.executions.update(
          { id: executions[i].id },
          { ...terminalTransition('completed', 'success', now), metadata: null, updatedAt: now },
        ),
      sweep: (i) =>
        tables.executions.update(
          { workflowId: workflows[i].id, state: ['scheduled', 'waiting'] },
          { ...terminalTransition('canceled', 'canceled', now), updatedAt: now },
        ),
      insertExecution: (i) =>
        tables.executions.insert({
          ...newExecutionRow(
            uuidv7(),
            {
              workflowId: workflows[i].id,
              stepName: 'second',
              scheduledFor: now,
              state: 'completed',
            },
            now,
          ),
        }),
      updateWorkflow: (i) =>
        tables.workflows.update(
          { id: workflows[i].id },
          { state: 'ready', currentStepName: null, nextStepName: 'second', updatedAt: now },
        ),
    };
    const backendMs = () => {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return (Number(fields[11]) + Number(fields[12])) * 10;
    };
    const runAll = async (statements: BoundStatement[], names: PostgresStatementNames) => {
      for (let start = 0; start < statements.length; start += PER_ROUND_TRIP)
        await runPipelined(client, statements.slice(start, start + PER_ROUND_TRIP), names);
    };
    /** Opens the transaction a measurement runs in (rolled back after it) and fills its rows. */
    const beginWithRows = async (names: PostgresStatementNames) => {
      await runner.query('BEGIN');
      await runAll(
        workflows.map((row) => tables.workflows.insert({ ...row })),
        names,
      );
      await runAll(
        executions.map((row) => tables.executions.insert({ ...row })),
        names,
      );
    };
    const runs = await repeatRuns(runCount(), async () => {
      const metrics: Metrics = {};
      let unnamedTotal = 0;
      let namedTotal = 0;
      for (const [name, statementOf] of Object.entries(shapes)) {
        for (const named of [false, true]) {
          const names = new PostgresStatementNames(named);
          await beginWithRows(names);
          const statements = workflows.map((_, i) => statementOf(i));
          const before = backendMs();
          await runAll(statements, names);
          const us = round(((backendMs() - before) * 1000) / ROWS);
          await runner.query('ROLLBACK');
          metrics[`${name}${named ? 'Named' : 'Unnamed'}Us`] = us;
          if (named) namedTotal += us;
          else unnamedTotal += us;
        }
      }
      metrics.chainedStepUnnamedUs = round(unnamedTotal);
      metrics.chainedStepNamedUs = round(namedTotal);
      let functionTotal = 0;
      const unnamedNames = new PostgresStatementNames(false);
      for (const [group, members] of Object.entries(FUNCTION_GROUPS)) {
        await beginWithRows(unnamedNames);
        const call = await createFunction(
          runner,
          `gd_bench_${group}`,
          members.map((member) => shapes[member](0)),
        );
        const calls = workflows.map((_, i) =>
          call(members.flatMap((member) => shapes[member](i).values)),
        );
        const before = backendMs();
        await runAll(calls, unnamedNames);
        const us = round(((backendMs() - before) * 1000) / ROWS);
        await runner.query('ROLLBACK');
        metrics[`${group}FunctionUs`] = us;
        functionTotal += us;
      }
      metrics.chainedStepFunctionUs = round(functionTotal);
      return metrics;
    });
    await emit('statement-cost', { rows: ROWS, perRoundTrip: PER_ROUND_TRIP }, runs);
  } finally {
    await runner.release();
    await harness.close();
  }
});

/**
 * Creates `pg_temp.<name>` (gone with the transaction's rollback) running `statements` in order;
 * resolves how to call it with their values. A lone SELECT (a lock by id) becomes
 * `RETURN QUERY SELECT * … WHERE "id" = $1 FOR UPDATE`, returning the table's rows (the library's
 * column list need not follow the table's column order); otherwise the function returns nothing. Parameter types are what PostgreSQL infers for each
 * statement (read from a throwaway SQL-level prepared statement: a benchmark-only shortcut, the
 * library itself never prepares at SQL level).
 */
async function createFunction(
  runner: QueryRunner,
  name: string,
  statements: BoundStatement[],
): Promise<(values: unknown[]) => BoundStatement> {
  const types: string[] = [];
  const bodies: string[] = [];
  for (const statement of statements) {
    await runner.query(`PREPARE gd_bench_probe AS ${statement.text}`);
    const [{ types: inferred }] = (await runner.query(
      `SELECT parameter_types::text[] AS types FROM pg_prepared_statements WHERE name = 'gd_bench_probe'`,
    )) as Array<{ types: string[] }>;
    await runner.query('DEALLOCATE gd_bench_probe');
    const offset = types.length;
    bodies.push(
      statement.text.replace(/\$(\d+)/g, (_, slot: string) => `$${Number(slot) + offset}`),
    );
    types.push(...inferred);
  }
  const returnsRows = statements.length === 1 && /^SELECT /.test(bodies[0]);
  const table = returnsRows
    ? /\bFROM ((?:"(?:[^"]|"")*"\.)?"(?:[^"]|"")*")/.exec(bodies[0])?.[1]
    : null;
  const body = returnsRows
    ? `RETURN QUERY SELECT * FROM ${table} WHERE "id" = $1 FOR UPDATE;`
    : bodies.map((text) => `${text};`).join('\n');
  await runner.query(
    `CREATE FUNCTION pg_temp.${name}(${types.join(', ')}) RETURNS ${returnsRows ? `SETOF ${table}` : 'void'} ` +
      `LANGUAGE plpgsql AS $gd$ BEGIN ${body} END $gd$`,
  );
  const slots = types.map((_, index) => `$${index + 1}`).join(', ');
  return (values) => ({ text: `SELECT * FROM pg_temp.${name}(${slots})`, values });
}
