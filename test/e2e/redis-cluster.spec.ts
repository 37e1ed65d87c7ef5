import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Cluster } from 'ioredis';
import {
  HousekeepingService,
  StepExecutionEntity,
  type GenevaDriveConnectionOptions,
} from '../../lib';
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

/** `host:port` of a node of a running Redis Cluster (test/redis-cluster/start.sh), if any. */
const CLUSTER_NODE = process.env.GENEVA_TEST_REDIS_CLUSTER;

function clusterClient(): Cluster {
  const [host, port] = CLUSTER_NODE!.split(':');
  return new Cluster([{ host, port: Number(port) }]);
}

/**
 * The engine on a real Redis Cluster of three masters (`.ci/run` starts one on 127.0.0.1:7101-7103
 * and sets GENEVA_TEST_REDIS_CLUSTER): the connection is an ioredis `Cluster`, the prefix has a
 * hash tag so each queue's keys share a slot. Skipped where no cluster is configured.
 */
describeIf(CLUSTER_NODE !== undefined)(
  `Redis Cluster, three masters (${testDatabaseLabel})`,
  () => {
    let cluster: Cluster;
    let harness: EngineHarness;
    const prefix = `{gd-cluster-${randomBytes(4).toString('hex')}}`;
    const connection = () => cluster as unknown as GenevaDriveConnectionOptions;

    beforeAll(async () => {
      cluster = clusterClient();
      harness = await EngineHarness.boot({
        workflows: [ScriptedWorkflow, ...HOUSEKEEPING_WORKFLOWS],
        providers: [StepScript, IterationScript],
        entities: [Order],
        options: { connection: connection(), prefix, housekeeping: { enabled: false } },
      });
    });

    afterAll(async () => {
      await harness?.close();
      const queue = new Queue('geneva-drive', { connection: cluster, prefix });
      await queue.obliterate({ force: true });
      await queue.close();
      await cluster?.quit();
    });

    const newOrder = () => harness.dataSource.getRepository(Order).save({ status: 'new' });

    it('runs a three-step workflow to finished through the cluster', async () => {
      const workflow = await harness.service.start(ScriptedWorkflow, { hero: await newOrder() });
      await harness.waitForState(workflow.id, 'finished');
      expect((await harness.history(workflow.id)).map((e) => e.state)).toEqual([
        'completed',
        'completed',
        'completed',
      ]);
    });

    it('a delayed step is a delayed job in the cluster, and reconciliation re-enqueues it once lost', async () => {
      const workflow = await harness.service.start(HousekeepingDelayedWorkflow, {
        hero: await newOrder(),
      });
      const execution = (await harness.service.currentExecution(workflow.id))!;
      const queue = new Queue('geneva-drive', { connection: cluster, prefix });
      try {
        expect(await queue.getJobState(execution.jobId!)).toBe('delayed');
        expect(await queue.remove(execution.jobId!)).toBe(1);
        await harness.dataSource
          .getRepository(StepExecutionEntity)
          .update(execution.id, { updatedAt: new Date(Date.now() - 60_000) });
        expect(await harness.get(HousekeepingService).reconcileScheduledJobs()).toBe(1);
        expect(await queue.getJobState(`${execution.id}_1`)).toBe('delayed');
      } finally {
        await queue.close();
        await harness.service.cancel(workflow);
      }
    });
  },
);
