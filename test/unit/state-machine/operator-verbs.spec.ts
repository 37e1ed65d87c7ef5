import { InvalidStateError, StepNotDefinedError, type WorkflowEntity } from '../../../lib';
import { Deferred } from './support/deferred';
import { StateMachine, rejectionOf } from './support/state-machine';
import { LinearWorkflow } from './support/state-machine.workflows';

/** OperatorVerbs through WorkflowService: which states each verb accepts and what it does. */
describe('state machine: operator verbs', () => {
  let sm: StateMachine;

  beforeAll(async () => (sm = await StateMachine.boot()));
  afterAll(() => sm.close());

  const ready = async () => (await sm.start(LinearWorkflow)).workflow;

  async function paused(): Promise<WorkflowEntity> {
    const workflow = await ready();
    await sm.service.pause(workflow);
    return workflow;
  }

  async function finished(): Promise<WorkflowEntity> {
    const workflow = await ready();
    for (let step = 0; step < 3; step++) await sm.runCurrent(workflow);
    return workflow;
  }

  async function canceled(): Promise<WorkflowEntity> {
    const workflow = await ready();
    await sm.service.cancel(workflow);
    return workflow;
  }

  /** A LinearWorkflow whose step `b` is running (performing) until `release` resolves. */
  async function performingB() {
    const started = await sm.start(LinearWorkflow);
    await sm.runCurrent(started.workflow);
    const entered = new Deferred();
    const release = new Deferred();
    sm.script.plan(started.hero, {
      b: async () => {
        entered.resolve();
        await release.promise;
      },
    });
    const b = await sm.current(started.workflow);
    const running = sm.run(b);
    await entered.promise;
    expect((await sm.find(started.workflow)).state).toBe('performing');
    /** Lets the step end and waits for its finalize. */
    const finish = async () => {
      release.resolve();
      await running;
    };
    return { ...started, b, finish };
  }

  async function expectInvalidState(verb: Promise<unknown>, fragment: string) {
    const error = await rejectionOf(verb);
    expect(error).toBeInstanceOf(InvalidStateError);
    expect(error.message).toContain(fragment);
  }

  describe('pause()', () => {
    it('pauses a ready workflow at once; its scheduled execution stays', async () => {
      const workflow = await ready();
      const resolved = await sm.service.pause(workflow);

      expect(resolved.state).toBe('paused');
      expect(resolved.transitionedAt).toBeInstanceOf(Date);
      expect((await sm.find(workflow)).state).toBe('paused');
      expect(await sm.trace(workflow)).toEqual(['a:scheduled/null']);
    });

    it('pauses a performing workflow at the step boundary: the step records its outcome, nothing is scheduled', async () => {
      const { workflow, finish } = await performingB();
      expect((await sm.service.pause(workflow)).state).toBe('paused');

      await finish();

      expect(await sm.trace(workflow)).toEqual(['a:completed/success', 'b:completed/success']);
      const stored = await sm.find(workflow);
      expect([stored.state, stored.nextStepName, stored.currentStepName]).toEqual([
        'paused',
        'c',
        null,
      ]);

      await sm.service.resume(workflow);
      expect(await sm.trace(workflow)).toEqual([
        'a:completed/success',
        'b:completed/success',
        'c:scheduled/null',
      ]);
    });

    it('refuses a paused, finished or canceled workflow with InvalidStateError', async () => {
      await expectInvalidState(sm.service.pause(await paused()), 'Cannot pause a paused workflow');
      await expectInvalidState(sm.service.pause(await finished()), 'Cannot pause a finished');
      await expectInvalidState(sm.service.pause(await canceled()), 'Cannot pause a canceled');
    });
  });

  describe('resume()', () => {
    it('re-enqueues the scheduled execution under a fresh job id with a fresh reattempt count', async () => {
      const workflow = await paused();
      const scheduled = await sm.current(workflow);

      const resolved = await sm.service.resume(workflow);

      expect([resolved.state, resolved.transitionedAt]).toEqual(['ready', null]);
      const again = await sm.current(workflow);
      expect([again.id, again.state, again.jobId, again.metadata]).toEqual([
        scheduled.id,
        'scheduled',
        `${scheduled.id}_1`,
        { reattemptCountReset: true },
      ]);
      expect(sm.jobsFor(scheduled).map((job) => job.jobId)).toEqual([
        scheduled.id,
        `${scheduled.id}_1`,
      ]);
    });

    it('refuses a workflow that is not paused with InvalidStateError', async () => {
      await expectInvalidState(sm.service.resume(await ready()), 'Cannot resume a ready workflow');
      await expectInvalidState(sm.service.resume(await finished()), 'Cannot resume a finished');
    });
  });

  describe('resumeAt()', () => {
    it('creates an execution of the named step and cancels the stray one', async () => {
      const workflow = await paused();

      const created = await sm.service.resumeAt(workflow, 'c');

      expect([created.stepName, created.state]).toEqual(['c', 'scheduled']);
      expect(await sm.trace(workflow)).toEqual(['a:canceled/canceled', 'c:scheduled/null']);
      const stored = await sm.find(workflow);
      expect([stored.state, stored.nextStepName]).toEqual(['ready', 'c']);
      expect(sm.jobsFor(created)).toHaveLength(1);
    });

    it('refuses a workflow that is not paused, and a step that does not exist', async () => {
      await expectInvalidState(sm.service.resumeAt(await ready(), 'b'), 'Cannot resumeAt a ready');
      const workflow = await paused();
      const error = await rejectionOf(sm.service.resumeAt(workflow, 'nope'));
      expect(error).toBeInstanceOf(StepNotDefinedError);
      expect((await sm.find(workflow)).state).toBe('paused');
      expect(await sm.trace(workflow)).toEqual(['a:scheduled/null']);
    });
  });

  describe('skip()', () => {
    it('skips the current step of a ready workflow and schedules the next one', async () => {
      const workflow = await ready();

      await sm.service.skip(workflow);

      expect(await sm.trace(workflow)).toEqual(['a:skipped/skipped', 'b:scheduled/null']);
      const stored = await sm.find(workflow);
      expect([stored.state, stored.nextStepName]).toEqual(['ready', 'b']);
    });

    it('refuses a performing workflow (its step is running) and a finished one', async () => {
      const { workflow, finish } = await performingB();
      try {
        await expectInvalidState(sm.service.skip(workflow), 'Cannot skip a performing workflow');
      } finally {
        await finish();
      }
      await expectInvalidState(sm.service.skip(await finished()), 'Cannot skip a finished');
    });
  });

  describe('cancel()', () => {
    it('cancels a ready workflow and its scheduled execution', async () => {
      const workflow = await ready();

      expect((await sm.service.cancel(workflow)).state).toBe('canceled');

      expect(await sm.trace(workflow)).toEqual(['a:canceled/canceled']);
    });

    it('cancels a performing workflow at the step boundary: the running execution ends canceled', async () => {
      const { workflow, finish } = await performingB();
      expect((await sm.service.cancel(workflow)).state).toBe('canceled');
      expect(await sm.trace(workflow)).toEqual(['a:completed/success', 'b:in_progress/null']);

      await finish();

      expect(await sm.trace(workflow)).toEqual(['a:completed/success', 'b:canceled/canceled']);
      const stored = await sm.find(workflow);
      expect([stored.state, stored.currentStepName]).toEqual(['canceled', null]);
    });

    it('refuses a finished or canceled workflow with InvalidStateError', async () => {
      await expectInvalidState(sm.service.cancel(await finished()), 'Cannot cancel a finished');
      await expectInvalidState(sm.service.cancel(await canceled()), 'Cannot cancel a canceled');
    });
  });
});
