import { Test } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import {
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS as CHANNELS,
  GenevaDriveModule,
  ModuleOptionsError,
  Step,
  StepExecutionEntity,
  Workflow,
  WorkflowEntity,
  type GenevaDriveModuleOptions,
  type StepContext,
} from '../../lib';
import { GenevaDriveHealthProbe } from '../../lib/health/geneva-drive-health.probe';
import { Order } from '../fixtures/order.entity';
import { ScriptedWorkflow } from '../fixtures/scripted.workflows';
import { StepScript } from '../fixtures/step-script';
import { LongTimeoutWorkflow } from '../fixtures/timeout.workflows';
import { PrioritizedWorkflow } from '../fixtures/policy.workflows';
import { Deferred } from './support/deferred';
import { dataSourceOptions, testDatabaseLabel } from './support/database';
import { DiagnosticsRecorder } from './support/diagnostics-recorder';
import { EngineHarness } from './support/engine-harness';

/** A first step, then one due three seconds later: long enough to shut down in between. */
@Workflow({ hero: () => Order })
class LaterStepWorkflow {
  constructor(private readonly script: StepScript) {}

  @Step() first(ctx: StepContext<Order>) {
    return this.script.run(ctx);
  }

  @Step({ wait: '3s' }) second(ctx: StepContext<Order>) {
    return this.script.run(ctx);
  }
}

const WORKFLOWS = [ScriptedWorkflow, LaterStepWorkflow, LongTimeoutWorkflow, PrioritizedWorkflow];
/** Nothing listens there: the local transport must never need it. */
const NO_REDIS: GenevaDriveModuleOptions['connection'] = { host: '127.0.0.1', port: 1 };
const LOCAL: GenevaDriveModuleOptions = { transport: 'local', connection: NO_REDIS };

/**
 * `transport: 'local'` (SPEC §16.5): steps run in this process through the same runner as on
 * BullMQ, with Redis unreachable; what a shutdown or crash left in the database runs after the
 * next boot (scheduled rows with their remaining delay, interrupted steps, wait timeouts).
 */
describe(`local transport (${testDatabaseLabel}, no Redis)`, () => {
  let events: DiagnosticsRecorder;
  let harness: EngineHarness | null = null;

  const boot = (reuse?: EngineHarness, options: GenevaDriveModuleOptions = {}) =>
    EngineHarness.boot({
      workflows: WORKFLOWS,
      providers: [StepScript],
      entities: [Order],
      options: { ...LOCAL, ...options },
      reuse: reuse && { schema: reuse.schema, prefix: reuse.prefix },
    });

  beforeAll(() => {
    events = new DiagnosticsRecorder([CHANNELS.finalize, CHANNELS.park, CHANNELS.waitTimeout]);
  });

  afterEach(async () => {
    await harness?.close();
    harness = null;
  });

  afterAll(() => events.close());

  const newOrder = (on: EngineHarness) =>
    on.dataSource.getRepository(Order).save({ status: 'new' });

  it('runs a three-step workflow to the end, chained in process', async () => {
    harness = await boot();
    const workflow = await harness.service.start(ScriptedWorkflow, {
      hero: await newOrder(harness),
    });
    await events.forWorkflow(CHANNELS.finalize, workflow.id, 3);
    expect((await harness.service.find(workflow.id))?.state).toBe('finished');
    expect((await harness.history(workflow.id)).map((e) => `${e.stepName}:${e.outcome}`)).toEqual([
      'a:success',
      'b:success',
      'c:success',
    ]);
  });

  it('runs 30 workflows concurrently, each step once', async () => {
    harness = await boot();
    const script = harness.get(StepScript);
    const orders = await Promise.all(Array.from({ length: 30 }, () => newOrder(harness!)));
    const workflows = await Promise.all(
      orders.map((hero) => harness!.service.start(ScriptedWorkflow, { hero })),
    );
    await Promise.all(workflows.map(({ id }) => events.forWorkflow(CHANNELS.finalize, id, 3)));
    for (const order of orders) expect(script.callsFor(order)).toEqual(['a', 'b', 'c']);
  });

  it('a step due later runs after a restart, at its time', async () => {
    const first = await boot();
    const order = await newOrder(first);
    const workflow = await first.service.start(LaterStepWorkflow, { hero: order });
    await events.forWorkflow(CHANNELS.finalize, workflow.id, 1);
    await first.closeApp();

    harness = await boot(first);
    const [, waiting] = await harness.history(workflow.id);
    expect(waiting).toMatchObject({ stepName: 'second', state: 'scheduled' });
    await events.forWorkflow(CHANNELS.finalize, workflow.id, 2);
    const [, ran] = await harness.history(workflow.id);
    expect(ran).toMatchObject({ stepName: 'second', state: 'completed', outcome: 'success' });
    expect(ran.startedAt!.getTime()).toBeGreaterThanOrEqual(waiting.scheduledFor.getTime());
    expect(harness.get(StepScript).callsFor(order)).toEqual(['second']);
  });

  it('a step left in_progress by a crash runs again at the next boot', async () => {
    const first = await boot();
    const workflow = await first.service.start(LaterStepWorkflow, { hero: await newOrder(first) });
    await events.forWorkflow(CHANNELS.finalize, workflow.id, 1);
    await first.closeApp();
    // What a process killed in the middle of `second` leaves behind.
    await editRows(first, async (rows) => {
      const [, second] = await rows
        .getRepository(StepExecutionEntity)
        .find({ where: { workflowId: workflow.id }, order: { createdAt: 'ASC' } });
      await rows
        .getRepository(StepExecutionEntity)
        .update(second.id, { state: 'in_progress', startedAt: new Date(Date.now() - 60_000) });
      await rows.getRepository(WorkflowEntity).update(workflow.id, { state: 'performing' });
    });

    harness = await boot(first);
    await events.forWorkflow(CHANNELS.finalize, workflow.id, 2);
    const history = await harness.history(workflow.id);
    expect(history.map((e) => `${e.stepName}:${e.state}/${e.outcome}`)).toEqual([
      'first:completed/success',
      'second:completed/recovered',
      'second:completed/success',
    ]);
    expect((await harness.service.find(workflow.id))?.state).toBe('finished');
  });

  it('the steps read back at boot run in priority order, the whole backlog at once', async () => {
    // One job at a time on 'prio': the first one holds it while the backlog queues up behind it.
    const oneAtATime: GenevaDriveModuleOptions = { queues: { prio: { concurrency: 1 } } };
    const first = await boot(undefined, oneAtATime);
    const [held, ...backlog] = await Promise.all(Array.from({ length: 9 }, () => newOrder(first)));
    const urgent = await newOrder(first);
    const entered = new Deferred();
    const release = new Deferred();
    first.get(StepScript).plan(held, {
      work: async () => {
        entered.resolve();
        await release.promise;
      },
    });
    await first.service.start(PrioritizedWorkflow, { hero: held });
    await entered.promise;
    for (const hero of backlog) {
      await first.service.start(PrioritizedWorkflow, { hero, stepJobOptions: { priority: 10 } });
    }
    await first.service.start(PrioritizedWorkflow, {
      hero: urgent,
      stepJobOptions: { priority: 1 },
    });
    // Shut down with the held step running and the backlog queued: the backlog stays scheduled.
    const closing = first.closeApp();
    release.resolve();
    await closing;

    harness = await boot(first, oneAtATime);
    const script = harness.get(StepScript);
    const workflows = await harness.service.list({ workflow: PrioritizedWorkflow });
    await Promise.all(workflows.map(({ id }) => events.forWorkflow(CHANNELS.finalize, id, 1)));
    // As on BullMQ, where a worker finds the whole backlog queued: the urgent step first, then
    // the others in the order they were enqueued.
    expect(script.calls.map((call) => call.heroId)).toEqual(
      [urgent, ...backlog].map((order) => order.id),
    );
  });

  it("a parked wait's timeout whose deadline passed while down fires at the next boot", async () => {
    const first = await boot();
    const workflow = await first.service.start(LongTimeoutWorkflow, {
      hero: await newOrder(first),
    });
    const [park] = await events.forWorkflow(CHANNELS.park, workflow.id, 1);
    await first.closeApp();
    await editRows(first, (rows) =>
      rows
        .getRepository(StepExecutionEntity)
        .update(park.executionId, { waitDeadlineAt: new Date(Date.now() - 1_000) })
        .then(() => undefined),
    );

    harness = await boot(first);
    await events.forWorkflow(CHANNELS.waitTimeout, workflow.id, 1);
    await events.forWorkflow(CHANNELS.finalize, workflow.id, 3);
    const capture = (await harness.history(workflow.id)).find((e) => e.stepName === 'capture');
    expect(capture).toMatchObject({ state: 'skipped', outcome: 'skipped' });
  });

  it('the health probe sees this process as the worker of its queues', async () => {
    harness = await boot();
    const findings = await harness.get(GenevaDriveHealthProbe).read();
    expect(findings).toMatchObject({
      healthy: true,
      transport: 'up',
      queues: [{ queue: 'geneva-drive', workers: 1 }],
    });
  });

  describe('refused at boot', () => {
    const compile = (options: GenevaDriveModuleOptions) =>
      Test.createTestingModule({ imports: [GenevaDriveModule.forRoot(options)] }).compile();

    it.each([
      [{ transport: 'local', worker: false }, /worker: false would leave every step unrun/],
      [{ transport: 'kafka' }, /transport must be one of 'redis', 'postgres', 'local'/],
    ] as Array<[GenevaDriveModuleOptions, RegExp]>)('%j', async (options, message) => {
      const error = await compile(options).then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(ModuleOptionsError);
      expect((error as Error).message).toMatch(message);
    });

    it('forRootAsync: a factory returning another transport than the static one', async () => {
      const error = await Test.createTestingModule({
        imports: [GenevaDriveModule.forRootAsync({ useFactory: () => ({ transport: 'local' }) })],
      })
        .compile()
        .then(
          () => null,
          (thrown: unknown) => thrown,
        );
      expect(error).toBeInstanceOf(ModuleOptionsError);
      expect((error as Error).message).toContain(
        "forRootAsync({ transport: 'local', useFactory })",
      );
    });
  });
});

/** Changes a stopped deployment's rows through a connection of the test's own. */
async function editRows(
  stopped: EngineHarness,
  edit: (rows: DataSource) => Promise<void>,
): Promise<void> {
  const rows = await new DataSource(dataSourceOptions(stopped.schema, [Order])).initialize();
  try {
    await edit(rows);
  } finally {
    await rows.destroy();
  }
}
