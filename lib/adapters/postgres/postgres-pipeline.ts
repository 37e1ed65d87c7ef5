import type { BoundStatement, StatementResult } from './bound-statement.interface';
import { PostgresPipelineQuery, type PgTypeParsers } from './postgres-pipeline.query';
import type { PostgresStatementNames } from './postgres-statement-names';

/** The node-postgres client a PostgreSQL query runner holds (`queryRunner.connect()`). */
export interface PgClient extends PgTypeParsers {
  /** Returns a promise for a query config; a submitted query object is returned as is. */
  query(query: unknown): unknown;
  /** Set when the pool was configured with `pipeline: true` (node-postgres ≥ 8.19). */
  pipeline?: boolean;
}

interface PgQueryResult {
  command: string;
  rowCount: number | null;
  rows: Array<Record<string, unknown>>;
}

/**
 * Runs `statements` in order in one round trip and resolves their results. A client in
 * node-postgres' own pipeline mode gets them as ordinary queries sent back to back; any other
 * client gets one pipelined message (PostgresPipelineQuery). Either way every value is bound.
 */
export async function runPipelined(
  client: PgClient,
  statements: readonly BoundStatement[],
  names: PostgresStatementNames,
): Promise<StatementResult[]> {
  // node-postgres tracks the names it parsed itself in pipeline mode, and nothing public clears
  // that after a DEALLOCATE: such clients get unnamed statements only.
  const plan = names.plan(client, statements, { named: !client.pipeline });
  try {
    let results: StatementResult[];
    if (client.pipeline) results = await runInClientPipeline(client, plan.statements);
    else {
      const query = new PostgresPipelineQuery(plan.statements, client);
      client.query(query);
      results = await query.done;
    }
    plan.succeeded();
    return results;
  } catch (error) {
    plan.failed();
    throw error;
  }
}

async function runInClientPipeline(
  client: PgClient,
  statements: ReturnType<PostgresStatementNames['plan']>['statements'],
): Promise<StatementResult[]> {
  const sent = statements.map(
    (statement) =>
      client.query({
        text: statement.text,
        values: statement.values,
      }) as Promise<PgQueryResult>,
  );
  const settled = await Promise.allSettled(sent);
  const failure = settled.find((outcome) => outcome.status === 'rejected');
  if (failure) throw failure.reason;
  return settled.map((outcome) => {
    const { command, rowCount, rows } = (outcome as PromiseFulfilledResult<PgQueryResult>).value;
    return { command, rowCount, rows };
  });
}
