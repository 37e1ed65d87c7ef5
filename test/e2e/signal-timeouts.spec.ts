import {
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS as CHANNELS,
  GENEVA_DRIVE_MIGRATIONS,
  GenevaDriveSignalTimeouts1764400005000,
  HousekeepingService,
  StepExecutionEntity,
  WorkflowNotOngoingError,
  type WorkflowEntity,
} from '../../lib';
import { WaitTimeoutExpirer } from '../../lib/runner/wait-timeout.expirer';
import { Order } from '../fixtures/order.entity';
import { StepScript } from '../fixtures/step-script';
import {
  LongTimeoutWorkflow,
  SHORT_TIMEOUT_MS,
  TIMEOUT_WORKFLOWS,
  TimeoutCancelWorkflow,
  TimeoutClassPolicyWorkflow,
  TimeoutDefaultPolicyWorkflow,
  TimeoutPauseWorkflow,
  TimeoutReattemptWorkflow,
  TimeoutSkipWorkflow,
} from '../fixtures/timeout.workflows';
import { Deferred } from './support/deferred';
import { testDatabaseLabel } from './support/database';
import { DiagnosticsRecorder } from './support/diagnostics-recorder';
import { EngineHarness } from './support/engine-harness';
import { itIf } from './support/describe-if';
import { testTransport } from './support/transport';

const HOUR = 3_600_000;

describe(`signal wait timeouts (${testDatabaseLabel} + Redis)`, () => {
  let harness: EngineHarness;
  let script: StepScript;
  let events: DiagnosticsRecorder;
  const gauges: Array<{ name: string; value: number }> = [];

  beforeAll(async () => {
    events = new DiagnosticsRecorder([CHANNELS.park, CHANNELS.waitTimeout, CHANNELS.finalize]);
    harness = await EngineHarness.boot({
      workflows: TIMEOUT_WORKFLOWS,
      providers: [StepScript],
      entities: [Order],
      options: { metrics: { gauge: (name, value) => gauges.push({ name, value }) } },
    });
    script = harness.get(StepScript);
  });

  afterAll(async () => {
    events?.close();
    await harness?.close();
  });

  const newOrder = () => harness.dataSource.getRepository(Order).save({ status: 'new' });
  const parked = (workflow: WorkflowEntity, count = 1) =>
    events.forWorkflow(CHANNELS.park, workflow.id, count);
  const timedOut = (workflow: WorkflowEntity, count = 1) =>
    events.forWorkflow(CHANNELS.waitTimeout, workflow.id, count);
  const executionsOf = async (workflow: WorkflowEntity, stepName: string) =>
    (await harness.history(workflow.id)).filter((execution) => execution.stepName === stepName);
  /** Moves a parked execution's deadline into the past, as if its hour had gone by. */
  const pastDeadline = (execution: StepExecutionEntity) =>
    harness.dataSource
      .getRepository(StepExecutionEntity)
      .update(execution.id, { waitDeadlineAt: new Date(Date.now() - 1_000) });
  const timeoutJobsOf = async (execution: StepExecutionEntity) =>
    (await harness.queue().getJobs(['delayed', 'waiting', 'active', 'completed', 'failed'])).filter(
      (job) => job.name === 'expire-wait' && job.data.stepExecutionId === execution.id,
    );
  const housekeeping = () => harness.get(HousekeepingService).run();

  it('skip: the waiting step is skipped without running its body, and the workflow goes on', async () => {
    const order = await newOrder();
    const workflow = await harness.service.start(TimeoutSkipWorkflow, { hero: order });
    await timedOut(workflow);
    await parked(workflow, 2); // capture, then settle (waiting for `receipt`, no timeout)
    const [capture] = await executionsOf(workflow, 'capture');
    expect(capture).toMatchObject({ state: 'skipped', outcome: 'skipped' });
    expect(capture.waitDeadlineAt!.getTime() - capture.waitingSince!.getTime()).toBe(
      SHORT_TIMEOUT_MS,
    );
    expect(capture.metadata?.exception).toMatchObject({ class: 'SignalWaitTimeoutError' });
    expect(script.callsFor(order)).toEqual(['ship']);
    const [settle] = await executionsOf(workflow, 'settle');
    expect(settle).toMatchObject({ state: 'waiting', waitDeadlineAt: null });
  });

  it('a signal after the timeout is buffered like any other', async () => {
    const order = await newOrder();
    const workflow = await harness.service.start(TimeoutSkipWorkflow, { hero: order });
    await parked(workflow, 2);
    await harness.service.signal(workflow, 'payment', { payload: { late: true } });
    const [payment] = await harness.service.signals(workflow);
    expect(payment).toMatchObject({ name: 'payment', state: 'pending', claimed: 0 });
    expect((await executionsOf(workflow, 'settle'))[0].state).toBe('waiting');
  });

  it('cancel: the workflow is canceled', async () => {
    const order = await newOrder();
    const workflow = await harness.service.start(TimeoutCancelWorkflow, { hero: order });
    await timedOut(workflow);
    expect((await harness.service.find(workflow.id))?.state).toBe('canceled');
    expect((await executionsOf(workflow, 'capture'))[0]).toMatchObject({ outcome: 'canceled' });
    expect(script.callsFor(order)).toEqual([]);
  });

  it('pause: failed/failed and paused; resume() parks again with a fresh deadline', async () => {
    const order = await newOrder();
    const workflow = await harness.service.start(TimeoutPauseWorkflow, { hero: order });
    await timedOut(workflow);
    expect((await harness.service.find(workflow.id))?.state).toBe('paused');
    const [first] = await executionsOf(workflow, 'capture');
    expect(first).toMatchObject({
      state: 'failed',
      outcome: 'failed',
      errorClassName: 'SignalWaitTimeoutError',
    });
    expect(first.errorMessage).toContain("signal 'payment'");

    await harness.service.resume(workflow);
    await parked(workflow, 2);
    const [, second] = await executionsOf(workflow, 'capture');
    expect(second.state).toBe('waiting');
    expect(second.waitDeadlineAt!.getTime()).toBeGreaterThan(first.waitDeadlineAt!.getTime());
    await timedOut(workflow, 2);
    expect((await harness.service.find(workflow.id))?.state).toBe('paused');
  });

  it('reattempt: parks again with a fresh deadline, counting toward maxReattempts', async () => {
    const order = await newOrder();
    const workflow = await harness.service.start(TimeoutReattemptWorkflow, { hero: order });
    await timedOut(workflow, 3);
    expect((await harness.service.find(workflow.id))?.state).toBe('canceled');
    const captures = await executionsOf(workflow, 'capture');
    expect(captures.map((execution) => execution.outcome)).toEqual([
      'reattempted',
      'reattempted',
      'canceled',
    ]);
    const deadlines = captures.map((execution) => execution.waitDeadlineAt!.getTime());
    expect(deadlines[1]).toBeGreaterThan(deadlines[0]);
    expect(deadlines[2]).toBeGreaterThan(deadlines[1]);
  });

  it('without onTimeout, the exception policy decides: the class policy for SignalWaitTimeoutError, else pause', async () => {
    const skipping = await harness.service.start(TimeoutClassPolicyWorkflow, {
      hero: await newOrder(),
    });
    const pausing = await harness.service.start(TimeoutDefaultPolicyWorkflow, {
      hero: await newOrder(),
    });
    await Promise.all([timedOut(skipping), timedOut(pausing)]);
    await events.forWorkflow(CHANNELS.finalize, skipping.id, 2); // capture's timeout, then ship
    expect((await harness.service.find(skipping.id))?.state).toBe('finished');
    expect((await executionsOf(skipping, 'capture'))[0].outcome).toBe('skipped');
    expect((await harness.service.find(pausing.id))?.state).toBe('paused');
    expect((await executionsOf(pausing, 'capture'))[0]).toMatchObject({
      outcome: 'failed',
      errorClassName: 'SignalWaitTimeoutError',
    });
  });

  // The timeout jobs are looked up in BullMQ (timeoutJobsOf): not on the local transport, whose
  // timers local-transport.spec covers.
  itIf(testTransport !== 'local')(
    'the deadline is a delayed BullMQ job fenced by execution id',
    async () => {
      const order = await newOrder();
      const workflow = await harness.service.start(LongTimeoutWorkflow, { hero: order });
      await parked(workflow);
      const [capture] = await executionsOf(workflow, 'capture');
      expect(capture.waitDeadlineAt!.getTime() - capture.waitingSince!.getTime()).toBe(HOUR);
      const [job] = await timeoutJobsOf(capture);
      expect(job.id).toMatch(new RegExp(`^${capture.id}_timeout_\\d+$`));
      expect(await job.getState()).toBe('delayed');
      expect(job.opts.delay).toBeGreaterThan(HOUR - 60_000);
      expect(job.opts.delay).toBeLessThanOrEqual(HOUR);
      await harness.service.cancel(workflow);
    },
  );

  itIf(testTransport !== 'local')(
    'housekeeping fires a passed deadline whose job is gone from Redis (the backstop)',
    async () => {
      const order = await newOrder();
      const workflow = await harness.service.start(LongTimeoutWorkflow, { hero: order });
      await parked(workflow);
      const [capture] = await executionsOf(workflow, 'capture');
      for (const job of await timeoutJobsOf(capture)) await job.remove();
      await pastDeadline(capture);
      gauges.length = 0;
      await housekeeping();
      await timedOut(workflow);
      expect(gauges).toContainEqual({ name: 'geneva_drive.waiting_timeouts_fired', value: 1 });
      await events.forWorkflow(CHANNELS.finalize, workflow.id, 3); // prepare, capture's timeout, ship
      expect((await harness.service.find(workflow.id))?.state).toBe('finished');
      expect((await executionsOf(workflow, 'capture'))[0].outcome).toBe('skipped');
      expect(script.callsFor(order)).toEqual(['prepare', 'ship']);
    },
  );

  it('a timeout is not fired while the workflow is paused; resume() arms it again, and a passed one fires', async () => {
    const order = await newOrder();
    const workflow = await harness.service.start(LongTimeoutWorkflow, { hero: order });
    await parked(workflow);
    await harness.service.pause(workflow);
    const [capture] = await executionsOf(workflow, 'capture');
    await pastDeadline(capture);
    await housekeeping();
    expect(events.seen(CHANNELS.waitTimeout, (event) => event.workflowId === workflow.id)).toEqual(
      [],
    );
    expect((await executionsOf(workflow, 'capture'))[0].state).toBe('waiting');

    await harness.service.resume(workflow);
    await timedOut(workflow);
    await events.forWorkflow(CHANNELS.finalize, workflow.id, 3);
    expect((await harness.service.find(workflow.id))?.state).toBe('finished');
    expect((await executionsOf(workflow, 'capture'))[0].outcome).toBe('skipped');
  });

  itIf(testTransport !== 'local')(
    'a buffered signal claimed at the gate never starts a timer',
    async () => {
      const order = await newOrder();
      const entered = new Deferred();
      const release = new Deferred();
      script.plan(order, {
        prepare: async () => {
          entered.resolve();
          await release.promise;
        },
      });
      const workflow = await harness.service.start(LongTimeoutWorkflow, { hero: order });
      await entered.promise;
      await harness.service.signal(workflow, 'payment');
      release.resolve();
      await events.forWorkflow(CHANNELS.finalize, workflow.id, 3);
      const [capture] = await executionsOf(workflow, 'capture');
      expect(capture).toMatchObject({
        state: 'completed',
        waitingSince: null,
        waitDeadlineAt: null,
      });
      expect(await timeoutJobsOf(capture)).toEqual([]);
      expect(events.seen(CHANNELS.park, (event) => event.workflowId === workflow.id)).toEqual([]);
    },
  );

  it('a signal and the deadline arriving together: exactly one wins, 50 rounds', async () => {
    const expirer = harness.get(WaitTimeoutExpirer);
    const outcomes = { signal: 0, timeout: 0 };
    for (let batch = 0; batch < 5; batch++) {
      // Heroes first, one by one: on SQLite the test's own writes share the library's one connection.
      const orders: Order[] = [];
      for (let i = 0; i < 10; i++) orders.push(await newOrder());
      await Promise.all(
        orders.map(async (order) => {
          const workflow = await harness.service.start(LongTimeoutWorkflow, { hero: order });
          const [park] = await parked(workflow);
          const [delivery] = await Promise.all([
            harness.service.signal(workflow, 'payment').catch((error: unknown) => error),
            expirer.expire(workflow.id, park.executionId, { force: true }),
          ]);
          await events.forWorkflow(CHANNELS.finalize, workflow.id, 3);
          const [capture] = await executionsOf(workflow, 'capture');
          const [signal] = await harness.service.signals(workflow);
          const ranBody = script.callsFor(order).includes('capture');
          if (delivery instanceof Error && !(delivery instanceof WorkflowNotOngoingError))
            throw delivery;
          if (delivery instanceof WorkflowNotOngoingError) {
            // The timeout won and the workflow finished (skip, then `ship`) before the signal's
            // lock was granted: refused, as any signal to a finished workflow, and nothing stored.
            outcomes.timeout += 1;
            expect(capture.outcome).toBe('skipped');
            expect(ranBody).toBe(false);
            expect(signal).toBeUndefined();
          } else if (capture.outcome === 'success') {
            outcomes.signal += 1;
            expect(ranBody).toBe(true);
            expect(capture.signalId).toBe(signal.id);
            expect(signal).toMatchObject({ state: 'consumed', claimed: 1, consumed: 1 });
          } else {
            outcomes.timeout += 1;
            expect(capture.outcome).toBe('skipped');
            expect(ranBody).toBe(false);
            expect(signal).toMatchObject({ state: 'pending', claimed: 0, consumed: 0 });
          }
          expect((await harness.service.find(workflow.id))?.state).toBe('finished');
        }),
      );
    }
    expect(outcomes.signal + outcomes.timeout).toBe(50);
  });
});

describe(`signal wait timeouts before their migration (${testDatabaseLabel})`, () => {
  let harness: EngineHarness;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: TIMEOUT_WORKFLOWS,
      providers: [StepScript],
      entities: [Order],
      migrations: GENEVA_DRIVE_MIGRATIONS.filter(
        (migration) => migration !== GenevaDriveSignalTimeouts1764400005000,
      ),
    });
  });

  afterAll(() => harness?.close());

  it('a step with a timeout pauses its workflow with MissingMigrationError naming the migration', async () => {
    const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    const workflow = await harness.service.start(TimeoutSkipWorkflow, { hero: order });
    await harness.waitForState(workflow.id, 'paused');
    const [capture] = await harness.history(workflow.id);
    expect(capture).toMatchObject({ state: 'failed', errorClassName: 'MissingMigrationError' });
    expect(capture.errorMessage).toContain('GenevaDriveSignalTimeouts1764400005000');
    expect(capture.waitDeadlineAt).toBeUndefined();
  });
});
