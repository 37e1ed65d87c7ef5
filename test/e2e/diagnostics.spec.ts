import diagnosticsChannel from 'node:diagnostics_channel';
import {
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS,
  WorkflowAlreadyOngoingError,
  type GenevaDriveDiagnosticsEvent,
  type WorkflowEntity,
} from 'nestjs-geneva-drive';
import {
  DiagnosticsResumableWorkflow,
  DiagnosticsWorkflow,
} from '../fixtures/diagnostics.workflows';
import { Order } from '../fixtures/order.entity';
import { StepScript } from '../fixtures/step-script';
import { StepJobQueue } from '../../lib/queue/step-job.queue';
import { EngineHarness } from './support/engine-harness';

type Channel = keyof typeof GENEVA_DRIVE_DIAGNOSTICS_CHANNELS;
const CHANNELS = Object.keys(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS) as Channel[];

describe('diagnostics channels and tagged logging (PostgreSQL + BullMQ)', () => {
  let harness: EngineHarness;
  let script: StepScript;
  const events: Array<{ channel: Channel; event: GenevaDriveDiagnosticsEvent }> = [];
  const logs: string[] = [];
  const listeners = CHANNELS.map((channel) => {
    const listener = (message: unknown) =>
      events.push({ channel, event: message as GenevaDriveDiagnosticsEvent });
    return { name: GENEVA_DRIVE_DIAGNOSTICS_CHANNELS[channel], listener };
  });
  const subscribe = () =>
    listeners.forEach(({ name, listener }) => diagnosticsChannel.subscribe(name, listener));
  const unsubscribe = () =>
    listeners.forEach(({ name, listener }) => diagnosticsChannel.unsubscribe(name, listener));

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [DiagnosticsWorkflow, DiagnosticsResumableWorkflow],
      providers: [StepScript],
      entities: [Order],
      options: {
        logger: {
          log: (message: unknown) => logs.push(String(message)),
          warn: (message: unknown) => logs.push(String(message)),
          error: (message: unknown) => logs.push(String(message)),
        },
      },
    });
    script = harness.get(StepScript);
    subscribe();
  });

  afterAll(async () => {
    unsubscribe();
    await harness?.close();
  });

  const newOrder = (status = 'new') => harness.dataSource.getRepository(Order).save({ status });
  const of = (workflow: WorkflowEntity) =>
    events.filter(({ event }) => event.workflowId === workflow.id);
  /**
   * The workflow reached `state` and `events` events are in. The finalize event is published just
   * after its transaction commits, so the new state can be visible a moment before it.
   */
  const settled = (workflow: WorkflowEntity, state: WorkflowEntity['state'], events: number) =>
    harness.waitForWorkflow(
      workflow.id,
      (row) => row.state === state && of(workflow).length >= events,
    );
  /** `channel:step:outcome` or, for finalize, `finalize:step:workflowState/stepState`. */
  const summary = (workflow: WorkflowEntity) =>
    of(workflow).map(({ channel, event }) =>
      channel === 'finalize'
        ? `finalize:${event.stepName}:${event.workflowState}/${event.stepState}`
        : `${channel}:${event.stepName}:${event.outcome}`,
    );

  it('happy path: precondition, step, finalize for each step, with the full payload', async () => {
    const order = await newOrder();
    const workflow = await harness.service.start(DiagnosticsWorkflow, { hero: order });
    await settled(workflow, 'finished', 6);
    expect(summary(workflow)).toEqual([
      'precondition:first:passed',
      'step:first:completed',
      'finalize:first:ready/completed',
      'precondition:second:passed',
      'step:second:completed',
      'finalize:second:finished/completed',
    ]);
    const [first] = await harness.history(workflow.id);
    expect(of(workflow)[0].event).toEqual({
      executionId: first.id,
      workflowId: workflow.id,
      workflowClass: 'DiagnosticsWorkflow',
      stepName: 'first',
      outcome: 'passed',
    });
    expect(of(workflow)[2].event).toEqual({
      executionId: first.id,
      workflowId: workflow.id,
      workflowClass: 'DiagnosticsWorkflow',
      stepName: 'first',
      workflowState: 'ready',
      stepState: 'completed',
    });
  });

  it('a start is logged once its transaction committed: a refused start logs no creation', async () => {
    const order = await newOrder();
    // The library's own log lines go through Nest's Logger (the app was created silent).
    const lines: string[] = [];
    const record = (message: unknown) => lines.push(String(message));
    harness.app.useLogger({ log: record, warn: record, error: record });
    // Its first step waits, so the first workflow is still ongoing at the second start (its two
    // steps can otherwise finish in between: seen on SQLite in CI).
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    script.plan(order, { first: () => held });
    try {
      const workflow = await harness.service.start(DiagnosticsWorkflow, { hero: order });
      await expect(
        harness.service.start(DiagnosticsWorkflow, { hero: order }),
      ).rejects.toBeInstanceOf(WorkflowAlreadyOngoingError);
      release();
      await settled(workflow, 'finished', 6);
      expect(lines.filter((line) => line.includes('created workflow'))).toEqual([
        `DiagnosticsWorkflow id=${workflow.id}: created workflow with 2 step(s) defined`,
      ]);
    } finally {
      release();
      harness.app.useLogger(false);
    }
  });

  it('a precondition abort publishes only the precondition event (canceled, skipped)', async () => {
    const voided = await harness.service.start(DiagnosticsWorkflow, {
      hero: await newOrder('void'),
    });
    await harness.waitForState(voided.id, 'canceled');
    expect(summary(voided)).toEqual(['precondition:first:canceled']);

    const skipped = await harness.service.start(DiagnosticsWorkflow, {
      hero: await newOrder('skip'),
    });
    await settled(skipped, 'finished', 4);
    expect(summary(skipped)).toEqual([
      'precondition:first:skipped',
      'precondition:second:passed',
      'step:second:completed',
      'finalize:second:finished/completed',
    ]);
  });

  it('a precondition that throws publishes outcome exception with the error', async () => {
    const workflow = await harness.service.start(DiagnosticsWorkflow, {
      hero: await newOrder('explode'),
    });
    await harness.waitForState(workflow.id, 'paused');
    expect(summary(workflow)).toEqual(['precondition:first:exception']);
    expect(of(workflow)[0].event.exception).toBeInstanceOf(Error);
    expect(of(workflow)[0].event.exception!.message).toBe('cancel condition exploded');
  });

  it('a step that throws: outcome exception with the error, then the paused/failed states', async () => {
    const order = await newOrder();
    script.plan(order, {
      first: () => {
        throw new TypeError('step exploded');
      },
    });
    const workflow = await harness.service.start(DiagnosticsWorkflow, { hero: order });
    await settled(workflow, 'paused', 3);
    expect(summary(workflow)).toEqual([
      'precondition:first:passed',
      'step:first:exception',
      'finalize:first:paused/failed',
    ]);
    const step = of(workflow)[1].event;
    expect(step.exception).toBeInstanceOf(TypeError);
    expect(step.exception!.message).toBe('step exploded');
  });

  it('flow control: the verb is the outcome, with the requested wait in ms', async () => {
    const order = await newOrder();
    script.plan(order, { first: (ctx) => ctx.reattempt({ wait: '1h' }) });
    const workflow = await harness.service.start(DiagnosticsWorkflow, { hero: order });
    await harness.waitForWorkflow(workflow.id, () => of(workflow).length === 3);
    expect(summary(workflow)).toEqual([
      'precondition:first:passed',
      'step:first:reattempt',
      'finalize:first:ready/completed',
    ]);
    expect(of(workflow)[1].event.wait).toBe(3_600_000);

    const finisher = await newOrder();
    script.plan(finisher, { first: (ctx) => ctx.finish() });
    const finished = await harness.service.start(DiagnosticsWorkflow, { hero: finisher });
    await settled(finished, 'finished', 3);
    expect(summary(finished)).toEqual([
      'precondition:first:passed',
      'step:first:finished',
      'finalize:first:finished/completed',
    ]);
    await harness.service.cancel(workflow);
  });

  it('resumable steps carry resumable: true; an interruption is outcome interrupted', async () => {
    const workflow = await harness.service.start(DiagnosticsResumableWorkflow, {
      hero: await newOrder(),
    });
    await settled(workflow, 'finished', 6);
    expect(summary(workflow)).toEqual([
      'precondition:walk:passed',
      'step:walk:interrupted',
      'finalize:walk:ready/completed',
      'precondition:walk:passed',
      'step:walk:completed',
      'finalize:walk:finished/completed',
    ]);
    expect(of(workflow).every(({ event }) => event.resumable === true)).toBe(true);
  });

  it("a step's finalize event is out before the job of what comes next is enqueued", async () => {
    const queue = harness.get(StepJobQueue);
    const order: string[] = [];
    const add = queue.add.bind(queue);
    const spy = jest.spyOn(queue, 'add').mockImplementation((job) => {
      order.push(`enqueue:${job.stepExecutionId}`);
      return add(job);
    });
    const recordFinalize = (message: unknown) => {
      const event = message as GenevaDriveDiagnosticsEvent;
      order.push(`finalize:${event.executionId}`);
    };
    diagnosticsChannel.subscribe(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.finalize, recordFinalize);
    try {
      const workflow = await harness.service.start(DiagnosticsResumableWorkflow, {
        hero: await newOrder(),
      });
      await settled(workflow, 'finished', 6);
      // The interruption continues in a new execution, enqueued by the first one's finalize.
      const [interrupted, resumed] = await harness.history(workflow.id);
      const ids = [interrupted.id, resumed.id];
      expect(order.filter((entry) => ids.some((id) => entry.endsWith(id)))).toEqual([
        `enqueue:${interrupted.id}`,
        `finalize:${interrupted.id}`,
        `enqueue:${resumed.id}`,
        `finalize:${resumed.id}`,
      ]);
    } finally {
      diagnosticsChannel.unsubscribe(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.finalize, recordFinalize);
      spy.mockRestore();
    }
  });

  it('with no subscriber nothing is published (no payload is built) and steps still run', async () => {
    unsubscribe();
    const published = CHANNELS.map((channel) =>
      jest.spyOn(diagnosticsChannel.channel(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS[channel]), 'publish'),
    );
    try {
      expect(
        CHANNELS.some((channel) =>
          diagnosticsChannel.hasSubscribers(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS[channel]),
        ),
      ).toBe(false);
      const workflow = await harness.service.start(DiagnosticsWorkflow, { hero: await newOrder() });
      await harness.waitForState(workflow.id, 'finished');
      expect(of(workflow)).toEqual([]);
      for (const spy of published) expect(spy).not.toHaveBeenCalled();
    } finally {
      published.forEach((spy) => spy.mockRestore());
      subscribe();
    }
  });

  it('ctx.logger is the custom logger tagged with the workflow, hero and execution', async () => {
    const order = await newOrder();
    script.plan(order, { first: (ctx) => ctx.logger.log('hello from the step') });
    const workflow = await harness.service.start(DiagnosticsWorkflow, { hero: order });
    await harness.waitForState(workflow.id, 'finished');
    const [first] = await harness.history(workflow.id);
    expect(logs).toContain(
      `[DiagnosticsWorkflow id=${workflow.id} hero_type=Order hero_id=${order.id}] ` +
        `[execution_id=${first.id} step_name=first] hello from the step`,
    );
  });
});
