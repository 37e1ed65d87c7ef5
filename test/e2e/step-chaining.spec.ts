import diagnosticsChannel from 'node:diagnostics_channel';
import {
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS,
  type GenevaDriveDiagnosticsEvent,
  type WorkflowEntity,
} from 'nestjs-geneva-drive';
import { ChainBreakingWorkflow, ChainedWorkflow } from '../fixtures/chaining.workflows';
import { Order } from '../fixtures/order.entity';
import { StepScript } from '../fixtures/step-script';
import { Deferred } from './support/deferred';
import { describeIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { testTransport } from './support/transport';

/**
 * A worker runs a workflow's next step in the same job when it is due now on the same queue and
 * priority (issue 8): the history is the same as with one job per step, only the jobs differ.
 * The jobs are looked up in BullMQ: not on the local transport, whose chaining local-transport.spec
 * covers.
 */
describeIf(testTransport !== 'local')('in-process step chaining (PostgreSQL + BullMQ)', () => {
  const boot = (maxChainedSteps?: number) =>
    EngineHarness.boot({
      workflows: [ChainedWorkflow, ChainBreakingWorkflow],
      providers: [StepScript],
      entities: [Order],
      options: {
        queues: { 'geneva-drive': { concurrency: 4 }, other: { concurrency: 1 } },
        ...(maxChainedSteps === undefined ? {} : { maxChainedSteps }),
      },
    });

  /** Per execution of the history: `step:state/outcome`, and whether BullMQ got a job for it. */
  async function trace(harness: EngineHarness, workflow: WorkflowEntity) {
    const history = await harness.history(workflow.id);
    const jobs: string[] = [];
    for (const execution of history) {
      const queue = execution.stepName === 'elsewhere' ? 'other' : 'geneva-drive';
      if (await harness.queue(queue).getJob(execution.id)) jobs.push(execution.stepName);
    }
    return { steps: history.map((e) => `${e.stepName}:${e.state}/${e.outcome}`), jobs, history };
  }

  describe('with the default limits', () => {
    let harness: EngineHarness;
    let script: StepScript;
    const newOrder = (status = 'new') => harness.dataSource.getRepository(Order).save({ status });

    beforeAll(async () => {
      harness = await boot();
      script = harness.get(StepScript);
    });
    afterAll(() => harness?.close());

    it('runs consecutive immediate steps in the first step’s job, in order, one execution each', async () => {
      const order = await newOrder();
      const workflow = await harness.service.start(ChainedWorkflow, { hero: order });
      await harness.waitForState(workflow.id, 'finished');

      const { steps, jobs, history } = await trace(harness, workflow);
      expect(steps).toEqual(
        ['one', 'two', 'three', 'four', 'five'].map((s) => `${s}:completed/success`),
      );
      expect(jobs).toEqual(['one']);
      expect(script.callsFor(order)).toEqual(['one', 'two', 'three', 'four', 'five']);
      for (let i = 1; i < history.length; i++) {
        expect(history[i].startedAt!.getTime()).toBeGreaterThanOrEqual(
          history[i - 1].finishedAt!.getTime(),
        );
      }
    });

    it('enqueues a step that waits, runs on another queue or returns from one, and parks a waitFor step', async () => {
      const order = await newOrder();
      const workflow = await harness.service.start(ChainBreakingWorkflow, { hero: order });
      await harness.waitForWorkflow(
        workflow.id,
        async () => (await harness.service.currentExecution(workflow.id))?.state === 'waiting',
      );
      await harness.service.signal(workflow.id, 'go');
      await harness.waitForState(workflow.id, 'finished');

      const { steps, jobs } = await trace(harness, workflow);
      expect(steps).toEqual(
        ['start', 'delayed', 'elsewhere', 'back', 'signaled'].map((s) => `${s}:completed/success`),
      );
      expect(jobs).toEqual(['start', 'delayed', 'elsewhere', 'back', 'signaled']);
    });

    it('a chained step’s skipIf skips it; the workflow goes on', async () => {
      const order = await newOrder('skip-two');
      const workflow = await harness.service.start(ChainedWorkflow, { hero: order });
      await harness.waitForState(workflow.id, 'finished');

      const { steps } = await trace(harness, workflow);
      expect(steps).toEqual([
        'one:completed/success',
        'two:skipped/skipped',
        'three:completed/success',
        'four:completed/success',
        'five:completed/success',
      ]);
      expect(script.callsFor(order)).toEqual(['one', 'three', 'four', 'five']);
    });

    it('a cancel condition that became true during the previous step cancels the chained step', async () => {
      const order = await newOrder();
      script.plan(order, {
        one: () => harness.dataSource.getRepository(Order).update(order.id, { status: 'void' }),
      });
      const workflow = await harness.service.start(ChainedWorkflow, { hero: order });
      await harness.waitForState(workflow.id, 'canceled');

      const { steps } = await trace(harness, workflow);
      expect(steps).toEqual(['one:completed/success', 'two:canceled/canceled']);
      expect(script.callsFor(order)).toEqual(['one']);
    });

    it('a chained precondition that throws goes to the step’s own job and its policy, once', async () => {
      const events: GenevaDriveDiagnosticsEvent[] = [];
      const listener = (message: unknown) => events.push(message as GenevaDriveDiagnosticsEvent);
      diagnosticsChannel.subscribe(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.precondition, listener);
      try {
        const order = await newOrder('explode-three');
        const workflow = await harness.service.start(ChainedWorkflow, { hero: order });
        await harness.waitForState(workflow.id, 'paused');

        const { steps, jobs, history } = await trace(harness, workflow);
        expect(steps).toEqual([
          'one:completed/success',
          'two:completed/success',
          'three:failed/failed',
        ]);
        expect(jobs).toEqual(['one', 'three']);
        expect(history[2].errorMessage).toBe('skipIf of three exploded');
        const mine = events.filter((event) => event.workflowId === workflow.id);
        expect(mine.map((event) => `${event.stepName}:${event.outcome}`)).toEqual([
          'one:passed',
          'two:passed',
          'three:exception',
        ]);
      } finally {
        diagnosticsChannel.unsubscribe(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.precondition, listener);
      }
    });

    it('an operator pause during a chained step stops the chain at the step boundary; resume goes on', async () => {
      const order = await newOrder();
      const release = new Deferred();
      const entered = new Deferred();
      script.plan(order, {
        two: async () => {
          entered.resolve();
          await release.promise;
        },
      });
      const workflow = await harness.service.start(ChainedWorkflow, { hero: order });
      await entered.promise;
      await harness.service.pause(workflow.id);
      release.resolve();
      const paused = await harness.waitForWorkflow(
        workflow.id,
        (w) => w.state === 'paused' && w.currentStepName === null,
      );
      expect(paused.nextStepName).toBe('three');
      expect((await trace(harness, workflow)).steps).toEqual([
        'one:completed/success',
        'two:completed/success',
      ]);

      await harness.service.resume(workflow.id);
      await harness.waitForState(workflow.id, 'finished');
      const { steps, jobs } = await trace(harness, workflow);
      expect(steps.slice(2)).toEqual(
        ['three', 'four', 'five'].map((s) => `${s}:completed/success`),
      );
      expect(jobs).toEqual(['one', 'three']);
    });
  });

  describe.each([
    [2, ['one', 'four']],
    [0, ['one', 'two', 'three', 'four', 'five']],
  ])('with maxChainedSteps: %i', (maxChainedSteps, expectedJobs) => {
    let harness: EngineHarness;
    beforeAll(async () => (harness = await boot(maxChainedSteps)));
    afterAll(() => harness?.close());

    it(`enqueues jobs for ${expectedJobs.join(', ')}`, async () => {
      const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
      const workflow = await harness.service.start(ChainedWorkflow, { hero: order });
      await harness.waitForState(workflow.id, 'finished');
      const { steps, jobs } = await trace(harness, workflow);
      expect(steps.every((step) => step.endsWith(':completed/success'))).toBe(true);
      expect(jobs).toEqual(expectedJobs);
    });
  });
});
