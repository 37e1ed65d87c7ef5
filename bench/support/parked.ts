import { StepExecutionEntity, WorkflowEntity } from '../../lib';
import { Order } from '../../test/fixtures/order.entity';
import type { EngineHarness } from '../../test/e2e/support/engine-harness';
import { qualifiedTable } from './dataset';

/**
 * Polls until `count` step executions are parked (`waiting` for a signal). Setup only, never
 * inside a measurement: parking runs no code the benchmark could hook into.
 */
export async function waitForParked(
  harness: EngineHarness,
  count: number,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const parked = await harness.dataSource
      .getRepository(StepExecutionEntity)
      .countBy({ state: 'waiting' });
    if (parked >= count) return;
    if (Date.now() > deadline)
      throw new Error(`Only ${parked} of ${count} workflows parked within ${timeoutMs} ms.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Copies the parked workflow `templateId` (its workflow row and its `waiting` execution, every
 * column as the engine wrote it) `count` times with one statement, each copy with new ids and a
 * new `Order` hero: parking 100k workflows through the engine would take minutes, and a copy is
 * row for row what the engine leaves behind. (The record is built in a LATERAL join: `(f(row)).*`
 * would call the function once per column.) Resolves the copies' workflow ids.
 */
export async function cloneParkedWorkflow(
  harness: EngineHarness,
  templateId: string,
  count: number,
): Promise<string[]> {
  const dataSource = harness.dataSource;
  const [orders, workflows, executions] = [Order, WorkflowEntity, StepExecutionEntity].map(
    (entity) => qualifiedTable(dataSource, entity),
  );
  const rows = await dataSource.query<Array<{ workflow_id: string }>>(
    `WITH heroes AS (
       INSERT INTO ${orders} (status) SELECT 'new' FROM generate_series(1, $2::int) RETURNING id
     ), clones AS (
       SELECT gen_random_uuid() AS workflow_id, gen_random_uuid() AS execution_id, id AS hero_id FROM heroes
     ), workflow_rows AS (
       INSERT INTO ${workflows}
       SELECT copy.* FROM ${workflows} template, clones,
         LATERAL jsonb_populate_record(NULL::${workflows}, to_jsonb(template)
           || jsonb_build_object('id', clones.workflow_id, 'hero_id', clones.hero_id::text)) copy
       WHERE template.id = $1
     )
     INSERT INTO ${executions}
     SELECT copy.* FROM ${executions} template, clones,
       LATERAL jsonb_populate_record(NULL::${executions}, to_jsonb(template)
         || jsonb_build_object('id', clones.execution_id, 'workflow_id', clones.workflow_id, 'job_id', clones.execution_id::text)) copy
     WHERE template.workflow_id = $1 AND template.state = 'waiting'
     RETURNING workflow_id`,
    [templateId, count],
  );
  return rows.map((row) => row.workflow_id);
}

/** Deletes every parked workflow (their executions and signals go with them). */
export async function deleteParkedWorkflows(harness: EngineHarness): Promise<void> {
  const dataSource = harness.dataSource;
  await dataSource.query(
    `DELETE FROM ${qualifiedTable(dataSource, WorkflowEntity)} WHERE id IN
       (SELECT workflow_id FROM ${qualifiedTable(dataSource, StepExecutionEntity)} WHERE state = 'waiting')`,
  );
}
