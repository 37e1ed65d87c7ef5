import { Test } from '@nestjs/testing';
import { Queue, createPostgresBackend, type PostgresPoolConfig } from 'bullmq';
import { DataSource } from 'typeorm';
import {
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS as CHANNELS,
  GenevaDriveModule,
  ModuleOptionsError,
  Step,
  StepExecutionEntity,
  Workflow,
  type GenevaDriveModuleOptions,
  type StepContext,
} from '../../lib';
import { bullmqSchemaFor } from '../../lib/adapters/bullmq-postgres/postgres-transport.connection';
import { GenevaDriveHealthProbe } from '../../lib/health/geneva-drive-health.probe';
import { HousekeepingService } from '../../lib/housekeeping/housekeeping.service';
import { HousekeepingDelayedWorkflow } from '../fixtures/housekeeping.workflows';
import { Order } from '../fixtures/order.entity';
import { ScriptedWorkflow } from '../fixtures/scripted.workflows';
import { PaymentWorkflow } from '../fixtures/signal.workflows';
import { StepScript } from '../fixtures/step-script';
import {
  postgresConnection,
  testDatabase,
  testDatabaseLabel,
  testPooler,
} from './support/database';
import { describeIf } from './support/describe-if';
import { DiagnosticsRecorder } from './support/diagnostics-recorder';
import { EngineHarness } from './support/engine-harness';

/** A first step, then one due a second later: a delayed job on BullMQ's PostgreSQL backend. */
@Workflow({ hero: () => Order })
class DelayedSecondStepWorkflow {
  constructor(private readonly script: StepScript) {}

  @Step() first(ctx: StepContext<Order>) {
    return this.script.run(ctx);
  }

  @Step({ wait: '1s' }) second(ctx: StepContext<Order>) {
    return this.script.run(ctx);
  }
}

const WORKFLOWS = [
  ScriptedWorkflow,
  DelayedSecondStepWorkflow,
  PaymentWorkflow,
  HousekeepingDelayedWorkflow,
];

/** The machine's PostgreSQL as a node-postgres config (what a user gives as `connection`). */
const POSTGRES: PostgresPoolConfig = {
  host: postgresConnection.host,
  port: postgresConnection.port,
  user: postgresConnection.username,
  password: postgresConnection.password,
  database: postgresConnection.database,
};

/**
 * On PostgreSQL the data source's database holds BullMQ's tables by default (`connection: {}`
 * stands for "no connection given" past the harness's Redis default); on MariaDB and SQLite the
 * transport needs a PostgreSQL `connection` of its own.
 */
const TRANSPORT: GenevaDriveModuleOptions = {
  transport: 'postgres',
  connection: testDatabase === 'postgres' ? {} : { ...POSTGRES },
};

/** BullMQ's schema (named after the prefix) of a stopped deployment, dropped. */
async function dropBullmqSchema(prefix: string): Promise<void> {
  const admin = await new DataSource(postgresConnection).initialize();
  try {
    // A plain identifier by construction (bullmqSchemaFor).
    await admin.query(`DROP SCHEMA IF EXISTS "${bullmqSchemaFor(prefix)}" CASCADE`);
  } finally {
    await admin.destroy();
  }
}

/**
 * `transport: 'postgres'` (SPEC §16.5): BullMQ 6's PostgreSQL backend carries the step jobs, with
 * no Redis connection at all; the runner path is the one of every transport. BullMQ's LISTEN and
 * its migration lock need a session of their own, which a transaction-mode pooler does not keep
 * (README, "Transports"), so the spec does not run through PgBouncer; BullMQ 5 (the oldest-stack
 * run) has no PostgreSQL backend.
 */
describeIf(testPooler === null && typeof createPostgresBackend === 'function')(
  `postgres transport (${testDatabaseLabel} rows, BullMQ on PostgreSQL)`,
  () => {
    let events: DiagnosticsRecorder;
    const harnesses: EngineHarness[] = [];

    const boot = async (options: GenevaDriveModuleOptions = {}, reuse?: EngineHarness) => {
      const harness = await EngineHarness.boot({
        workflows: WORKFLOWS,
        providers: [StepScript],
        entities: [Order],
        options: { ...TRANSPORT, ...options },
        reuse: reuse && { schema: reuse.schema, prefix: reuse.prefix },
      });
      harnesses.push(harness);
      return harness;
    };

    const newOrder = (on: EngineHarness) =>
      on.dataSource.getRepository(Order).save({ status: 'new' });

    /** A handle on a deployment's queue through BullMQ's own PostgreSQL backend. */
    const queueOf = (harness: EngineHarness) =>
      new Queue(
        'geneva-drive',
        { connection: { ...POSTGRES, schema: bullmqSchemaFor(harness.prefix) } },
        createPostgresBackend,
      );

    beforeAll(() => {
      events = new DiagnosticsRecorder([CHANNELS.finalize, CHANNELS.park]);
    });

    afterEach(async () => {
      const prefixes = new Set(harnesses.map((harness) => harness.prefix));
      for (const harness of harnesses.splice(0).reverse()) await harness.close();
      for (const prefix of prefixes) await dropBullmqSchema(prefix);
    });

    afterAll(() => events.close());

    it("runs a three-step workflow to the end, its jobs in BullMQ's tables in the schema named after the prefix", async () => {
      const harness = await boot();
      const workflow = await harness.service.start(ScriptedWorkflow, {
        hero: await newOrder(harness),
      });
      await events.forWorkflow(CHANNELS.finalize, workflow.id, 3);
      expect((await harness.history(workflow.id)).map((e) => `${e.stepName}:${e.outcome}`)).toEqual(
        ['a:success', 'b:success', 'c:success'],
      );
      const admin = await new DataSource(postgresConnection).initialize();
      try {
        const schemas = await admin.query<Array<{ name: string }>>(
          'SELECT schema_name AS name FROM information_schema.schemata WHERE schema_name = $1',
          [bullmqSchemaFor(harness.prefix)],
        );
        expect(schemas).toEqual([{ name: bullmqSchemaFor(harness.prefix) }]);
      } finally {
        await admin.destroy();
      }
    });

    it('runs 30 workflows concurrently, each step once', async () => {
      const harness = await boot();
      const script = harness.get(StepScript);
      const orders = await Promise.all(Array.from({ length: 30 }, () => newOrder(harness)));
      const workflows = await Promise.all(
        orders.map((hero) => harness.service.start(ScriptedWorkflow, { hero })),
      );
      await Promise.all(workflows.map(({ id }) => events.forWorkflow(CHANNELS.finalize, id, 3)));
      for (const order of orders) expect(script.callsFor(order)).toEqual(['a', 'b', 'c']);
    });

    it('a delayed step runs once its wait is over, not before', async () => {
      const harness = await boot();
      const workflow = await harness.service.start(DelayedSecondStepWorkflow, {
        hero: await newOrder(harness),
      });
      await events.forWorkflow(CHANNELS.finalize, workflow.id, 2);
      const [, second] = await harness.history(workflow.id);
      expect(second).toMatchObject({ stepName: 'second', state: 'completed', outcome: 'success' });
      expect(second.startedAt!.getTime()).toBeGreaterThanOrEqual(second.scheduledFor.getTime());
    });

    it('a signal wakes a parked step', async () => {
      const harness = await boot();
      const workflow = await harness.service.start(PaymentWorkflow, {
        hero: await newOrder(harness),
      });
      await events.forWorkflow(CHANNELS.park, workflow.id, 1);
      await harness.service.signal(workflow.id, 'payment', { payload: { amount: 10 } });
      await events.forWorkflow(CHANNELS.finalize, workflow.id, 3);
      expect((await harness.service.find(workflow.id))?.state).toBe('finished');
    });

    it('a worker: false process enqueues; a worker process on the same database runs the steps', async () => {
      const producer = await boot({ worker: false });
      const consumer = await boot({}, producer);
      const workflow = await producer.service.start(ScriptedWorkflow, {
        hero: await newOrder(producer),
      });
      await events.forWorkflow(CHANNELS.finalize, workflow.id, 3);
      expect(consumer.get(StepScript).calls.map((call) => call.step)).toEqual(['a', 'b', 'c']);
      expect(producer.get(StepScript).calls).toEqual([]);
    });

    it("reconciliation re-enqueues a job lost from BullMQ's tables, and the health probe sees the worker", async () => {
      const harness = await boot({ worker: false });
      const started = await harness.service.start(HousekeepingDelayedWorkflow, {
        hero: await newOrder(harness),
      });
      const execution = (await harness.service.currentExecution(started.id))!;
      const queue = queueOf(harness);
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
      }

      // Once its worker has run a step, the transport has registered it.
      const worker = await boot({}, harness);
      const quick = await worker.service.start(ScriptedWorkflow, { hero: await newOrder(worker) });
      await events.forWorkflow(CHANNELS.finalize, quick.id, 3);
      expect(await worker.get(GenevaDriveHealthProbe).read()).toMatchObject({
        transport: 'up',
        queues: [{ queue: 'geneva-drive', workers: 1 }],
      });
    });

    describe('refused at boot', () => {
      const bootError = (options: GenevaDriveModuleOptions) =>
        boot(options).then(
          () => null,
          (thrown: unknown) => thrown,
        );

      it('a Redis client as the connection', async () => {
        const client = new (class FakeRedisClient {
          connect() {}
          disconnect() {}
          duplicate() {}
        })();
        const error = await Test.createTestingModule({
          imports: [GenevaDriveModule.forRoot({ transport: 'postgres', connection: client })],
        })
          .compile()
          .then(
            () => null,
            (thrown: unknown) => thrown,
          );
        expect(error).toBeInstanceOf(ModuleOptionsError);
        expect((error as Error).message).toMatch(/node-postgres pool config/);
      });

      (testDatabase === 'postgres' ? it.skip : it)(
        'no connection on a data source that is not PostgreSQL',
        async () => {
          const error = await bootError({ connection: {} });
          expect(error).toBeInstanceOf(ModuleOptionsError);
          expect((error as Error).message).toMatch(/that data source is (mariadb|better-sqlite3)/);
        },
      );
    });
  },
);
