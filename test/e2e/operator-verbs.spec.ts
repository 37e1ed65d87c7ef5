import {
  InvalidStateError,
  StepExecutionEntity,
  StepNotDefinedError,
  WorkflowNotFoundError,
  type WorkflowEntity,
} from '../../lib';
import { Order } from '../fixtures/order.entity';
import { DelayedStartWorkflow, ScriptedWorkflow } from '../fixtures/scripted.workflows';
import { StepScript } from '../fixtures/step-script';
import { Deferred } from './support/deferred';
import { testDatabaseLabel } from './support/database';
import { itIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { testTransport } from './support/transport';

describe(`operator verbs from every state (${testDatabaseLabel} + BullMQ)`, () => {
  let harness: EngineHarness;
  let script: StepScript;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [ScriptedWorkflow, DelayedStartWorkflow],
      providers: [StepScript],
      entities: [Order],
    });
    script = harness.get(StepScript);
  });

  afterAll(() => harness?.close());

  const newOrder = () => harness.dataSource.getRepository(Order).save({ status: 'new' });

  /** A ready workflow whose first step is due in an hour. */
  async function readyWorkflow(): Promise<WorkflowEntity> {
    const order = await newOrder();
    return harness.service.start(DelayedStartWorkflow, { hero: order });
  }

  /** A workflow whose step `b` is running until `release` resolves. */
  async function performingWorkflow() {
    const entered = new Deferred();
    const release = new Deferred();
    const order = await newOrder();
    script.plan(order, {
      b: async () => {
        entered.resolve();
        await release.promise;
      },
    });
    const workflow = await harness.service.start(ScriptedWorkflow, { hero: order });
    await entered.promise;
    return { workflow, order, release };
  }

  async function finishedWorkflow(): Promise<WorkflowEntity> {
    const workflow = await harness.service.start(ScriptedWorkflow, { hero: await newOrder() });
    return harness.waitForState(workflow.id, 'finished');
  }

  describe('from ready', () => {
    it('pause() pauses and leaves the scheduled execution in place', async () => {
      const workflow = await readyWorkflow();
      const paused = await harness.service.pause(workflow);
      expect(paused.state).toBe('paused');
      expect(paused.transitionedAt).toBeInstanceOf(Date);
      expect((await harness.service.currentExecution(workflow))?.state).toBe('scheduled');
    });

    it('resume() is refused', async () => {
      await expect(harness.service.resume(await readyWorkflow())).rejects.toThrow(
        InvalidStateError,
      );
    });

    it('skip() skips the current execution and schedules the next step', async () => {
      const workflow = await readyWorkflow();
      await harness.service.skip(workflow);
      await harness.waitForState(workflow.id, 'finished');
      const history = await harness.history(workflow.id);
      expect(history.map((e) => `${e.stepName}:${e.state}/${e.outcome}`)).toEqual([
        'later:skipped/skipped',
        'after:completed/success',
      ]);
      expect(history[0].finishedAt).toBeInstanceOf(Date);
    });

    it('cancel() cancels the workflow and its scheduled execution', async () => {
      const workflow = await readyWorkflow();
      const canceled = await harness.service.cancel(workflow.id);
      expect(canceled.state).toBe('canceled');
      const [execution] = await harness.history(workflow.id);
      expect([execution.state, execution.outcome]).toEqual(['canceled', 'canceled']);
    });
  });

  describe('from paused', () => {
    it('pause() is refused', async () => {
      const workflow = await harness.service.pause(await readyWorkflow());
      await expect(harness.service.pause(workflow)).rejects.toThrow(
        'Cannot pause a paused workflow',
      );
    });

    // Reads the BullMQ job's delay: not on the local transport.
    itIf(testTransport !== 'local')(
      'resume() keeps a future scheduled_for: the same execution is re-enqueued delayed',
      async () => {
        const workflow = await readyWorkflow();
        const before = (await harness.service.currentExecution(workflow))!;
        await harness.service.pause(workflow);
        const resumed = await harness.service.resume(workflow);
        expect(resumed.state).toBe('ready');
        expect(resumed.transitionedAt).toBeNull();
        const after = (await harness.service.currentExecution(workflow))!;
        expect(after.id).toBe(before.id);
        expect(after.scheduledFor.getTime()).toBe(before.scheduledFor.getTime());
        expect(after.jobId).toBe(`${before.id}_1`);
        const job = await harness.queue().getJob(after.jobId!);
        expect(job?.delay).toBeGreaterThan(3_500_000);
      },
    );

    it('resume() runs an overdue execution now', async () => {
      const workflow = await readyWorkflow();
      const execution = (await harness.service.currentExecution(workflow))!;
      await harness.service.pause(workflow);
      const overdue = new Date(Date.now() - 60_000);
      await harness.dataSource
        .getRepository(StepExecutionEntity)
        .update({ id: execution.id }, { scheduledFor: overdue });
      await harness.service.resume(workflow);
      await harness.waitForState(workflow.id, 'finished');
      const [first] = await harness.history(workflow.id);
      expect(first.id).toBe(execution.id);
      expect(first.scheduledFor.getTime()).toBe(overdue.getTime());
      expect(first.metadata?.reattemptCountReset).toBe(true);
    });

    it('skip() moves past the paused step', async () => {
      const order = await newOrder();
      script.plan(order, { a: (ctx) => ctx.pause() });
      const workflow = await harness.service.start(ScriptedWorkflow, { hero: order });
      await harness.waitForState(workflow.id, 'paused');
      await harness.service.skip(workflow);
      await harness.waitForState(workflow.id, 'finished');
      expect(script.callsFor(order)).toEqual(['a', 'b', 'c']);
    });

    it('cancel() cancels', async () => {
      const workflow = await harness.service.pause(await readyWorkflow());
      expect((await harness.service.cancel(workflow)).state).toBe('canceled');
      expect(await harness.service.currentExecution(workflow)).toBeNull();
    });

    it('resumeAt() starts over at the named step and refuses unknown steps', async () => {
      const workflow = await harness.service.pause(await readyWorkflow());
      await expect(harness.service.resumeAt(workflow, 'nope')).rejects.toThrow(StepNotDefinedError);
      expect((await harness.service.find(workflow.id))?.state).toBe('paused');
      const execution = await harness.service.resumeAt(workflow, 'after');
      expect(execution.stepName).toBe('after');
      await harness.waitForState(workflow.id, 'finished');
      const history = await harness.history(workflow.id);
      expect(history.map((e) => `${e.stepName}:${e.state}`)).toEqual([
        'later:canceled',
        'after:completed',
      ]);
    });
  });

  describe('from performing', () => {
    it('pause() takes effect at the step boundary; resume() creates the next execution', async () => {
      const { workflow, order, release } = await performingWorkflow();
      expect((await harness.service.find(workflow.id))?.state).toBe('performing');
      const paused = await harness.service.pause(workflow);
      expect(paused.state).toBe('paused');
      release.resolve();
      const settled = await harness.waitForWorkflow(
        workflow.id,
        (w) => w.state === 'paused' && w.currentStepName === null,
      );
      expect(settled.nextStepName).toBe('c');
      expect(await harness.service.currentExecution(workflow)).toBeNull();
      const history = await harness.history(workflow.id);
      expect(history.map((e) => `${e.stepName}:${e.state}/${e.outcome}`)).toEqual([
        'a:completed/success',
        'b:completed/success',
      ]);
      await harness.service.resume(workflow);
      await harness.waitForState(workflow.id, 'finished');
      expect(script.callsFor(order)).toEqual(['a', 'b', 'c']);
    });

    it('cancel() takes effect at the step boundary: the running execution ends canceled', async () => {
      const { workflow, order, release } = await performingWorkflow();
      expect((await harness.service.cancel(workflow)).state).toBe('canceled');
      release.resolve();
      await harness.waitForWorkflow(workflow.id, (w) => w.currentStepName === null);
      const history = await harness.history(workflow.id);
      expect(history.map((e) => `${e.stepName}:${e.state}/${e.outcome}`)).toEqual([
        'a:completed/success',
        'b:canceled/canceled',
      ]);
      expect(script.callsFor(order)).toEqual(['a', 'b']);
    });

    it('skip() and resume() are refused', async () => {
      const { workflow, release } = await performingWorkflow();
      await expect(harness.service.skip(workflow)).rejects.toThrow(InvalidStateError);
      await expect(harness.service.resume(workflow)).rejects.toThrow(InvalidStateError);
      release.resolve();
      await harness.waitForState(workflow.id, 'finished');
    });
  });

  describe('from finished and canceled', () => {
    it('every verb is refused', async () => {
      const finished = await finishedWorkflow();
      const canceled = await harness.service.cancel(await readyWorkflow());
      for (const workflow of [finished, canceled]) {
        for (const verb of ['pause', 'resume', 'skip', 'cancel'] as const) {
          await expect(harness.service[verb](workflow)).rejects.toThrow(InvalidStateError);
        }
        await expect(harness.service.resumeAt(workflow, 'a')).rejects.toThrow(InvalidStateError);
      }
    });
  });

  it('an unknown id rejects with WorkflowNotFoundError; find() resolves null', async () => {
    const id = '01900000-0000-7000-8000-000000000000';
    expect(await harness.service.find(id)).toBeNull();
    expect(await harness.service.find('not-a-uuid')).toBeNull();
    await expect(harness.service.pause(id)).rejects.toThrow(WorkflowNotFoundError);
    await expect(harness.service.executionHistory(id)).rejects.toThrow(WorkflowNotFoundError);
  });
});
