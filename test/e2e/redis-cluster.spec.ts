import { Cluster } from 'ioredis';
import { HousekeepingService, StepExecutionEntity } from '../../lib';
import {
  HOUSEKEEPING_WORKFLOWS,
  HousekeepingDelayedWorkflow,
} from '../fixtures/housekeeping.workflows';
import { Order } from '../fixtures/order.entity';
import { IterationScript } from '../fixtures/resumable.workflows';
import { ScriptedWorkflow } from '../fixtures/scripted.workflows';
import { StepScript } from '../fixtures/step-script';
import { testDatabaseLabel } from './support/database';
import { describeIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { testRedisCluster } from './support/redis';

/**
 * The engine on a real Redis Cluster of three masters (`.ci/run` starts one on 127.0.0.1:7101-7103
 * and sets GENEVA_TEST_REDIS_CLUSTER, under which the whole harness runs on it): the connection
 * is an ioredis `Cluster`, the prefix has a hash tag so each queue's keys share a slot. Skipped
 * where no cluster is configured.
 */
describeIf(testRedisCluster !== null)(`Redis Cluster, three masters (${testDatabaseLabel})`, () => {
  let harness: EngineHarness;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [ScriptedWorkflow, ...HOUSEKEEPING_WORKFLOWS],
      providers: [StepScript, IterationScript],
      entities: [Order],
    });
  });

  afterAll(() => harness?.close());

  const newOrder = () => harness.dataSource.getRepository(Order).save({ status: 'new' });

  it('runs a three-step workflow to finished through the cluster, every key of the queue on one node', async () => {
    expect(harness.prefix).toMatch(/^\{[^{}]+\}$/);
    const workflow = await harness.service.start(ScriptedWorkflow, { hero: await newOrder() });
    await harness.waitForState(workflow.id, 'finished');
    expect((await harness.history(workflow.id)).map((e) => e.state)).toEqual([
      'completed',
      'completed',
      'completed',
    ]);
    const client = new Cluster([testRedisCluster!]);
    try {
      await new Promise((resolve) => client.once('ready', resolve));
      const keysPerMaster = await Promise.all(
        client.nodes('master').map((node) => node.keys(`${harness.prefix}:*`)),
      );
      expect(keysPerMaster.map((keys) => keys.length > 0).sort()).toEqual([false, false, true]);
    } finally {
      await client.quit();
    }
  });

  it('a delayed step is a delayed job in the cluster, and reconciliation re-enqueues it once lost', async () => {
    const workflow = await harness.service.start(HousekeepingDelayedWorkflow, {
      hero: await newOrder(),
    });
    const execution = (await harness.service.currentExecution(workflow.id))!;
    const queue = harness.queue();
    try {
      expect(await queue.getJobState(execution.jobId!)).toBe('delayed');
      expect(await queue.remove(execution.jobId!)).toBe(1);
      await harness.dataSource
        .getRepository(StepExecutionEntity)
        .update(execution.id, { updatedAt: new Date(Date.now() - 60_000) });
      expect(await harness.get(HousekeepingService).reconcileScheduledJobs()).toBe(1);
      expect(await queue.getJobState(`${execution.id}_1`)).toBe('delayed');
    } finally {
      await harness.service.cancel(workflow);
    }
  });
});
