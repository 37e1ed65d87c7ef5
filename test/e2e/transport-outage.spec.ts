import {
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS as CHANNELS,
  type ErrorReportContext,
  type WorkflowEntity,
} from '../../lib';
import { Order } from '../fixtures/order.entity';
import { ScriptedWorkflow } from '../fixtures/scripted.workflows';
import { StepScript } from '../fixtures/step-script';
import { testDatabaseLabel } from './support/database';
import { describeIf } from './support/describe-if';
import { testTransport } from './support/transport';
import { DiagnosticsRecorder } from './support/diagnostics-recorder';
import { EngineHarness } from './support/engine-harness';
import { testRedisCluster } from './support/redis';
import { TcpProxy } from './support/tcp-proxy';

/**
 * Redis going away under a running app (SPEC §16.5): `start()` resolves once its transaction
 * commits instead of waiting for Redis, the outage is reported once with the address, and the
 * jobs land and the workflows finish by themselves once Redis answers again. (Through a proxy in
 * front of the suite's single Redis: not on the Redis Cluster run, nor on the PostgreSQL or local
 * transport.)
 */
describeIf(testRedisCluster === null && testTransport === 'redis')(
  `transport outage (${testDatabaseLabel} + Redis behind a proxy)`,
  () => {
    let proxy: TcpProxy;
    let harness: EngineHarness;
    let events: DiagnosticsRecorder;
    const reports: Array<{ error: Error; context: ErrorReportContext }> = [];

    beforeAll(async () => {
      proxy = await TcpProxy.start({ host: '127.0.0.1', port: 6379 });
      events = new DiagnosticsRecorder([CHANNELS.finalize]);
      harness = await EngineHarness.boot({
        workflows: [ScriptedWorkflow],
        providers: [StepScript],
        entities: [Order],
        options: {
          connection: { host: '127.0.0.1', port: proxy.port },
          errorReporter: (error, context) => void reports.push({ error, context }),
        },
      });
    });

    afterAll(async () => {
      await proxy?.up();
      await harness?.close();
      events?.close();
      await proxy?.down();
    });

    const newOrder = () => harness.dataSource.getRepository(Order).save({ status: 'new' });

    it('start() resolves while Redis is down; one report names the address; the workflows finish once it is back', async () => {
      const heroes = [await newOrder(), await newOrder(), await newOrder()];
      await proxy.down();

      const started: WorkflowEntity[] = [];
      for (const hero of heroes)
        started.push(await harness.service.start(ScriptedWorkflow, { hero }));

      const outages = reports.filter(({ error }) => error.name === 'TransportUnavailableError');
      expect(outages).toHaveLength(1);
      expect(outages[0].error.message).toContain(`Redis at 127.0.0.1:${proxy.port}`);
      for (const workflow of started) {
        expect(await harness.service.currentExecution(workflow.id)).toMatchObject({
          state: 'scheduled',
        });
      }

      await proxy.up();
      await Promise.all(started.map(({ id }) => events.forWorkflow(CHANNELS.finalize, id, 3)));
      for (const workflow of started) {
        expect((await harness.service.find(workflow.id))?.state).toBe('finished');
      }
      expect(
        reports.filter(({ error }) => error.name === 'TransportUnavailableError'),
      ).toHaveLength(1);
    }, 60_000);
  },
);
