import { InvalidStateError } from '../../lib';
import { Order } from '../fixtures/order.entity';
import {
  RetryingWorkflow,
  ScriptedWorkflow,
  ShortWaitWorkflow,
} from '../fixtures/scripted.workflows';
import { StepScript } from '../fixtures/step-script';
import { testDatabaseLabel } from './support/database';
import { itIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { ReportedErrors } from './support/reported-errors';
import { testTransport } from './support/transport';

describe(`flow control and exceptions inside steps (${testDatabaseLabel} + BullMQ)`, () => {
  let harness: EngineHarness;
  let script: StepScript;
  const reported = new ReportedErrors();

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [ScriptedWorkflow, ShortWaitWorkflow, RetryingWorkflow],
      providers: [StepScript],
      entities: [Order],
      options: { errorReporter: reported.reporter },
    });
    script = harness.get(StepScript);
  });

  afterAll(() => harness?.close());

  async function scripted(behaviors: Parameters<StepScript['plan']>[1]) {
    const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    script.plan(order, behaviors);
    const workflow = await harness.service.start(ScriptedWorkflow, { hero: order });
    return { order, workflow };
  }

  async function outcomes(id: string) {
    return (await harness.history(id)).map((e) => `${e.stepName}:${e.state}/${e.outcome}`);
  }

  it('cancel() cancels the workflow and records the execution canceled', async () => {
    const { workflow } = await scripted({ b: (ctx) => ctx.cancel() });
    await harness.waitForState(workflow.id, 'canceled');
    expect(await outcomes(workflow.id)).toEqual(['a:completed/success', 'b:canceled/canceled']);
  });

  it('pause() pauses; the execution is canceled and resume() runs the step again', async () => {
    let paused = false;
    const { order, workflow } = await scripted({
      b: (ctx) => {
        if (!paused) {
          paused = true;
          ctx.pause();
        }
      },
    });
    const atPause = await harness.waitForState(workflow.id, 'paused');
    expect(atPause.nextStepName).toBe('b');
    await harness.service.resume(workflow.id);
    await harness.waitForState(workflow.id, 'finished');
    expect(script.callsFor(order)).toEqual(['a', 'b', 'b', 'c']);
    expect(await outcomes(workflow.id)).toEqual([
      'a:completed/success',
      'b:canceled/canceled',
      'b:completed/success',
      'c:completed/success',
    ]);
  });

  it('skip() moves on to the next step', async () => {
    const { order, workflow } = await scripted({ a: (ctx) => ctx.skip() });
    await harness.waitForState(workflow.id, 'finished');
    expect(script.callsFor(order)).toEqual(['a', 'b', 'c']);
    expect((await outcomes(workflow.id))[0]).toBe('a:skipped/skipped');
  });

  it('finish() ends the workflow at once and clears next_step_name', async () => {
    const { order, workflow } = await scripted({ a: (ctx) => ctx.finish() });
    const finished = await harness.waitForState(workflow.id, 'finished');
    expect(finished.nextStepName).toBeNull();
    expect(script.callsFor(order)).toEqual(['a']);
    expect(await outcomes(workflow.id)).toEqual(['a:completed/success']);
  });

  it('reattempt() runs the same step again, recorded as a flow-control reattempt', async () => {
    let attempts = 0;
    const { workflow } = await scripted({
      a: (ctx) => {
        if (++attempts < 3) ctx.reattempt();
      },
    });
    await harness.waitForState(workflow.id, 'finished');
    const history = await harness.history(workflow.id);
    expect(history.slice(0, 3).map((e) => [e.outcome, e.metadata?.reattemptReason])).toEqual([
      ['reattempted', 'flow_control'],
      ['reattempted', 'flow_control'],
      ['success', undefined],
    ]);
  });

  // Reads the BullMQ job's delay: not on the local transport.
  itIf(testTransport !== 'local')(
    'reattempt({ wait }) delays the new execution and its BullMQ job',
    async () => {
      const { workflow } = await scripted({ a: (ctx) => ctx.reattempt({ wait: '1h' }) });
      await harness.waitForWorkflow(
        workflow.id,
        (w) => w.state === 'ready' && w.updatedAt > w.createdAt,
      );
      const history = await waitForHistory(workflow.id, 2);
      const current = history[1];
      expect(current.state).toBe('scheduled');
      const delayMs = current.scheduledFor.getTime() - current.createdAt.getTime();
      expect(delayMs).toBeGreaterThan(3_599_000);
      const job = await harness.queue().getJob(current.id);
      expect(job?.delay).toBeGreaterThan(3_590_000);
      await harness.service.cancel(workflow.id);
    },
  );

  it('a flow-control request is honored even when the step swallows what was thrown', async () => {
    const { order, workflow } = await scripted({
      a: (ctx) => {
        try {
          ctx.cancel();
        } catch {
          // user code that swallows everything
        }
        throw new Error('after the swallowed verb');
      },
    });
    await harness.waitForState(workflow.id, 'canceled');
    expect(script.callsFor(order)).toEqual(['a']);
    expect(reported.reports.some(({ error }) => error.message === 'after the swallowed verb')).toBe(
      false,
    );
  });

  it('suspend() outside a resumable step raises InvalidStateError, which pauses the workflow', async () => {
    let thrown: unknown;
    const { workflow } = await scripted({
      a: (ctx) => {
        try {
          ctx.suspend();
        } catch (error) {
          thrown = error;
          throw error;
        }
      },
    });
    await harness.waitForState(workflow.id, 'paused');
    expect(thrown).toBeInstanceOf(InvalidStateError);
    const [execution] = await harness.history(workflow.id);
    expect([execution.state, execution.outcome, execution.errorClassName]).toEqual([
      'failed',
      'failed',
      'InvalidStateError',
    ]);
  });

  it('an exception pauses by default, fills the error columns and is reported', async () => {
    class PaymentDeclined extends Error {}
    const { workflow } = await scripted({
      b: () => {
        throw new PaymentDeclined('card declined');
      },
    });
    const paused = await harness.waitForState(workflow.id, 'paused');
    expect(paused.nextStepName).toBe('b');
    const failed = (await harness.history(workflow.id))[1];
    expect(failed).toMatchObject({
      state: 'failed',
      outcome: 'failed',
      errorClassName: 'PaymentDeclined',
      errorMessage: 'card declined',
    });
    expect(failed.errorBacktrace).toContain('flow-control.spec.ts');
    expect(failed.metadata?.exception).toMatchObject({
      class: 'PaymentDeclined',
      message: 'card declined',
    });
    await reported.waitFor(({ error }) => error.message === 'card declined');
  });

  it("onException: 'reattempt' with maxReattempts then the terminal action", async () => {
    const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    script.plan(order, {
      flaky: () => {
        throw new Error('still flaky');
      },
    });
    const workflow = await harness.service.start(RetryingWorkflow, { hero: order });
    await harness.waitForState(workflow.id, 'finished');
    expect(await outcomes(workflow.id)).toEqual([
      'flaky:completed/reattempted',
      'flaky:completed/reattempted',
      'flaky:skipped/skipped',
      'done:completed/success',
    ]);
    const history = await harness.history(workflow.id);
    expect(history[0].metadata?.reattemptReason).toBe('exception_policy');
    expect(history[0].errorMessage).toBeNull();
  });

  it('wait delays the next step through a real delayed BullMQ job', async () => {
    const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    const workflow = await harness.service.start(ShortWaitWorkflow, { hero: order });
    await harness.waitForState(workflow.id, 'finished');
    const [first, second] = await harness.history(workflow.id);
    expect(second.scheduledFor.getTime() - first.finishedAt!.getTime()).toBeGreaterThanOrEqual(390);
    expect(second.startedAt!.getTime()).toBeGreaterThanOrEqual(second.scheduledFor.getTime());
  });

  async function waitForHistory(id: string, length: number) {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const history = await harness.history(id);
      if (history.length >= length) return history;
      if (Date.now() > deadline) throw new Error(`history stayed at ${history.length} executions`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }
});
