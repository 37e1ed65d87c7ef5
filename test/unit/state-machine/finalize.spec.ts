import type { StepContext } from '../../../lib';
import { StateMachine, rejectionOf } from './support/state-machine';
import {
  CancelingPolicyWorkflow,
  type Customer,
  LinearWorkflow,
  PausingPolicyWorkflow,
  ReattemptingPolicyWorkflow,
  SkippingPolicyWorkflow,
} from './support/state-machine.workflows';

class PaymentDeclined extends Error {}

/** Phase 3 of a step (StepFinalizer): what its result does to the execution and the workflow. */
describe('state machine: finalize', () => {
  let sm: StateMachine;

  beforeAll(async () => (sm = await StateMachine.boot()));
  afterAll(() => sm.close());

  /** Starts a LinearWorkflow whose step `b` does `behavior`, and runs `a` and `b`. */
  async function runB(behavior: (ctx: StepContext<Customer>) => unknown) {
    const started = await sm.start(LinearWorkflow);
    sm.script.plan(started.hero, { b: behavior });
    await sm.runCurrent(started.workflow);
    const b = await sm.runCurrent(started.workflow);
    return { ...started, b, stored: await sm.find(started.workflow) };
  }

  describe('a step that completes', () => {
    it('is completed/success and the next step is scheduled and enqueued', async () => {
      const { workflow, hero } = await sm.start(LinearWorkflow);
      const a = await sm.runCurrent(workflow);

      expect(sm.script.callsFor(hero)).toEqual(['a']);
      expect(await sm.trace(workflow)).toEqual(['a:completed/success', 'b:scheduled/null']);
      const [done, next] = await sm.history(workflow);
      expect(done.id).toBe(a.id);
      expect(done.startedAt).toBeInstanceOf(Date);
      expect(done.completedAt).toBeInstanceOf(Date);
      expect(done.finishedAt).toBeInstanceOf(Date);
      const stored = await sm.find(workflow);
      expect([stored.state, stored.currentStepName, stored.nextStepName]).toEqual([
        'ready',
        null,
        'b',
      ]);
      expect(sm.jobsFor(next)).toEqual([
        expect.objectContaining({ jobId: next.id, queue: 'geneva-drive', delay: 0 }),
      ]);
    });

    it('finishes the workflow when it was the last step', async () => {
      const { workflow, hero } = await sm.start(LinearWorkflow);
      for (let step = 0; step < 3; step++) await sm.runCurrent(workflow);

      expect(sm.script.callsFor(hero)).toEqual(['a', 'b', 'c']);
      expect(await sm.trace(workflow)).toEqual([
        'a:completed/success',
        'b:completed/success',
        'c:completed/success',
      ]);
      const stored = await sm.find(workflow);
      expect([stored.state, stored.currentStepName, stored.nextStepName]).toEqual([
        'finished',
        null,
        null,
      ]);
      expect(stored.transitionedAt).toBeInstanceOf(Date);
      expect(await sm.service.currentExecution(workflow)).toBeNull();
    });
  });

  describe('flow control', () => {
    it('ctx.pause(): the execution is canceled, the workflow paused at that step; resume() runs it again', async () => {
      const { workflow, b, stored } = await runB((ctx) => ctx.pause());

      expect(await sm.trace(workflow)).toEqual(['a:completed/success', 'b:canceled/canceled']);
      expect([stored.state, stored.nextStepName, stored.currentStepName]).toEqual([
        'paused',
        'b',
        null,
      ]);
      expect(sm.jobs().filter((job) => job.stepExecutionId === b.id)).toHaveLength(1);

      await sm.service.resume(workflow);
      const again = await sm.current(workflow);
      expect([again.stepName, again.state, again.metadata]).toEqual([
        'b',
        'scheduled',
        { reattemptCountReset: true },
      ]);
      expect(sm.jobsFor(again)).toHaveLength(1);
    });

    it('ctx.pause() is honored even when the step catches and swallows it', async () => {
      const { workflow, stored } = await runB((ctx) => {
        try {
          ctx.pause();
        } catch {
          // user code that swallows everything
        }
      });
      expect(await sm.trace(workflow)).toEqual(['a:completed/success', 'b:canceled/canceled']);
      expect(stored.state).toBe('paused');
    });

    it('ctx.cancel(): the execution and the workflow are canceled, nothing is scheduled', async () => {
      const { workflow, stored } = await runB((ctx) => ctx.cancel());
      expect(await sm.trace(workflow)).toEqual(['a:completed/success', 'b:canceled/canceled']);
      expect(stored.state).toBe('canceled');
      expect(await sm.service.currentExecution(workflow)).toBeNull();
    });

    it('ctx.skip(): the execution is skipped and the next step is scheduled', async () => {
      const { workflow, stored } = await runB((ctx) => ctx.skip());
      expect(await sm.trace(workflow)).toEqual([
        'a:completed/success',
        'b:skipped/skipped',
        'c:scheduled/null',
      ]);
      expect([stored.state, stored.nextStepName]).toEqual(['ready', 'c']);
    });

    it('ctx.finish(): the execution completes and the workflow finishes without the remaining steps', async () => {
      const { workflow, hero, stored } = await runB((ctx) => ctx.finish());
      expect(await sm.trace(workflow)).toEqual(['a:completed/success', 'b:completed/success']);
      expect([stored.state, stored.nextStepName, stored.currentStepName]).toEqual([
        'finished',
        null,
        null,
      ]);
      expect(sm.script.callsFor(hero)).toEqual(['a', 'b']);
    });

    it('ctx.reattempt({ wait }): completed/reattempted and the same step again after the wait', async () => {
      const before = Date.now();
      const { workflow, stored } = await runB((ctx) => ctx.reattempt({ wait: '10m' }));

      expect(await sm.trace(workflow)).toEqual([
        'a:completed/success',
        'b:completed/reattempted',
        'b:scheduled/null',
      ]);
      const [, reattempted, again] = await sm.history(workflow);
      expect(reattempted.metadata).toEqual({ reattemptReason: 'flow_control' });
      expect(again.scheduledFor.getTime()).toBeGreaterThanOrEqual(before + 600_000);
      const [job] = sm.jobsFor(again);
      expect(job.delay).toBeGreaterThan(599_000);
      expect(job.delay).toBeLessThanOrEqual(600_000);
      expect([stored.state, stored.nextStepName]).toEqual(['ready', 'b']);
    });
  });

  describe('exception policies', () => {
    const decline = () => {
      throw new PaymentDeclined('card declined');
    };

    async function runRisky(workflowClass: Parameters<StateMachine['start']>[0]) {
      const started = await sm.start(workflowClass);
      sm.script.plan(started.hero, { risky: decline });
      const error = await rejectionOf(sm.runCurrent(started.workflow));
      return { ...started, error, stored: await sm.find(started.workflow) };
    }

    it('default (pause): failed/failed with the error recorded, workflow paused, error re-raised and reported', async () => {
      const reportsBefore = sm.reports.length;
      const { workflow, error, stored } = await runRisky(PausingPolicyWorkflow);

      expect(error).toBeInstanceOf(PaymentDeclined);
      expect(await sm.trace(workflow)).toEqual(['risky:failed/failed']);
      const [row] = await sm.history(workflow);
      expect([row.errorClassName, row.errorMessage]).toEqual(['PaymentDeclined', 'card declined']);
      expect(row.metadata).toEqual({
        exception: expect.objectContaining({ class: 'PaymentDeclined', message: 'card declined' }),
      });
      expect([stored.state, stored.currentStepName]).toEqual(['paused', null]);
      expect(sm.reports.slice(reportsBefore)).toEqual([
        expect.objectContaining({
          error,
          context: expect.objectContaining({ workflowId: workflow.id, stepName: 'risky' }),
        }),
      ]);
    });

    it("'cancel': failed/canceled and the workflow canceled", async () => {
      const { workflow, stored } = await runRisky(CancelingPolicyWorkflow);
      expect(await sm.trace(workflow)).toEqual(['risky:failed/canceled']);
      expect(stored.state).toBe('canceled');
      expect(await sm.service.currentExecution(workflow)).toBeNull();
    });

    it("'skip': skipped/skipped and the next step scheduled", async () => {
      const { workflow, stored } = await runRisky(SkippingPolicyWorkflow);
      expect(await sm.trace(workflow)).toEqual(['risky:skipped/skipped', 'after:scheduled/null']);
      expect([stored.state, stored.nextStepName]).toEqual(['ready', 'after']);
    });

    it("'reattempt' with maxReattempts: 2 reattempts, then the terminal action (cancel)", async () => {
      const { workflow, hero } = await runRisky(ReattemptingPolicyWorkflow);
      expect(await sm.trace(workflow)).toEqual([
        'risky:completed/reattempted',
        'risky:scheduled/null',
      ]);
      expect((await sm.find(workflow)).state).toBe('ready');

      await rejectionOf(sm.runCurrent(workflow));
      expect((await sm.find(workflow)).state).toBe('ready');
      await rejectionOf(sm.runCurrent(workflow));

      expect(sm.script.callsFor(hero)).toEqual(['risky', 'risky', 'risky']);
      expect(await sm.trace(workflow)).toEqual([
        'risky:completed/reattempted',
        'risky:completed/reattempted',
        'risky:failed/canceled',
      ]);
      const history = await sm.history(workflow);
      expect(history.slice(0, 2).map((e) => e.metadata?.reattemptReason)).toEqual([
        'exception_policy',
        'exception_policy',
      ]);
      expect((await sm.find(workflow)).state).toBe('canceled');
    });
  });
});
