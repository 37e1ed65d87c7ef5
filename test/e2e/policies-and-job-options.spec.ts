import { WorkflowEntity } from '../../lib';
import { Order } from '../fixtures/order.entity';
import {
  BackoffWorkflow,
  CardDeclined,
  FraudSuspected,
  GatewayTimeout,
  ImperativeWorkflow,
  PolicyWorkflow,
  PrioritizedWorkflow,
  RefundDesk,
  RoutedWorkflow,
  ThrowingSkipIfWorkflow,
} from '../fixtures/policy.workflows';
import { StepScript } from '../fixtures/step-script';
import { testDatabaseLabel } from './support/database';
import { describeIf, itIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { ReportedErrors } from './support/reported-errors';
import { testTransport } from './support/transport';

const WORKFLOWS = [
  PolicyWorkflow,
  ImperativeWorkflow,
  BackoffWorkflow,
  ThrowingSkipIfWorkflow,
  RoutedWorkflow,
];

describe(`exception policies and job options (${testDatabaseLabel} + BullMQ)`, () => {
  let harness: EngineHarness;
  let script: StepScript;
  const reported = new ReportedErrors();

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: WORKFLOWS,
      providers: [StepScript, RefundDesk],
      entities: [Order],
      options: {
        queues: { 'geneva-drive': { concurrency: 5 }, critical: { concurrency: 2 } },
        errorReporter: reported.reporter,
      },
    });
    script = harness.get(StepScript);
  });

  afterAll(() => harness?.close());

  async function scripted(
    workflow: Parameters<EngineHarness['service']['start']>[0],
    failWith: () => Error,
    status = 'new',
  ) {
    const order = await harness.dataSource.getRepository(Order).save({ status });
    let calls = 0;
    script.plan(order, {
      charge: () => {
        calls += 1;
        throw failWith();
      },
      refund: () => {
        throw failWith();
      },
      call: () => {
        throw failWith();
      },
    });
    const started = await harness.service.start(workflow, { hero: order });
    return { order, workflow: started, calls: () => calls };
  }

  const outcomes = async (id: string) =>
    (await harness.history(id)).map((e) => `${e.stepName}:${e.state}/${e.outcome}`);
  /** Resolves once a report of the workflow arrived. */
  const reportOf = (id: string) => reported.waitFor((report) => report.context.workflowId === id);

  it('the step-level policy wins over class-level ones', async () => {
    const { workflow } = await scripted(PolicyWorkflow, () => new GatewayTimeout('slow'));
    await harness.waitForState(workflow.id, 'paused');
    expect(await outcomes(workflow.id)).toEqual(['charge:failed/failed']);
  });

  it('class-level: the first matching specific policy in array order, reported per its mode', async () => {
    const declined = await scripted(PolicyWorkflow, () => new CardDeclined('no funds'));
    await harness.waitForState(declined.workflow.id, 'finished');
    expect(await outcomes(declined.workflow.id)).toEqual([
      'charge:skipped/skipped',
      'settle:completed/success',
    ]);
    expect(reported.of(declined.workflow.id)).toEqual([]);

    const fraud = await scripted(PolicyWorkflow, () => new Error('fraud-ish'));
    await harness.waitForState(fraud.workflow.id, 'canceled');
    expect(await outcomes(fraud.workflow.id)).toEqual(['charge:failed/canceled']);
    const [report] = await reportOf(fraud.workflow.id);
    expect(report.context).toEqual({
      workflowId: fraud.workflow.id,
      workflowClass: 'PolicyWorkflow',
      stepExecutionId: (await harness.history(fraud.workflow.id))[0].id,
      stepName: 'charge',
      heroType: 'Order',
      heroId: String(fraud.order.id),
    });
    expect(new FraudSuspected()).toBeInstanceOf(Error);
  });

  it('the first blanket policy: maxReattempts 3 means the 4th failure is terminal, after exactly 4 executions', async () => {
    const { workflow, calls } = await scripted(PolicyWorkflow, () => new Error('flaky'));
    await harness.waitForState(workflow.id, 'canceled');
    expect(calls()).toBe(4);
    expect(await outcomes(workflow.id)).toEqual([
      'charge:completed/reattempted',
      'charge:completed/reattempted',
      'charge:completed/reattempted',
      'charge:failed/canceled',
    ]);
    // terminalOnly: one report, for the terminal failure only (the last thing the step does).
    await reportOf(workflow.id);
    expect(reported.of(workflow.id)).toHaveLength(1);
    const history = await harness.history(workflow.id);
    expect(history[0].metadata).toMatchObject({
      reattemptReason: 'exception_policy',
      exception: { class: 'Error', message: 'flaky' },
    });
  });

  it('an operator resume() starts a fresh reattempt count', async () => {
    const { workflow, calls } = await scripted(PolicyWorkflow, () => new GatewayTimeout('slow'));
    await harness.waitForState(workflow.id, 'paused');
    await harness.service.resume(workflow);
    await harness.waitForWorkflow(workflow.id, () => calls() === 2);
    await harness.waitForState(workflow.id, 'paused');
    const history = await harness.history(workflow.id);
    expect(history[1].metadata?.reattemptCountReset).toBe(true);
  });

  it('imperative handlers run with `this` bound to the workflow and decide through a verb', async () => {
    const desk = harness.get(RefundDesk);
    const skipped = await scripted(ImperativeWorkflow, () => new Error('skip me'));
    await harness.waitForState(skipped.workflow.id, 'finished');
    expect(await outcomes(skipped.workflow.id)).toEqual([
      'refund:skipped/skipped',
      'close:completed/success',
    ]);

    const delayed = await scripted(ImperativeWorkflow, () => new Error('later'));
    await harness.waitForWorkflow(
      delayed.workflow.id,
      async () => (await harness.history(delayed.workflow.id)).length === 2,
    );
    const [, retry] = await harness.history(delayed.workflow.id);
    expect(retry.scheduledFor.getTime() - Date.now()).toBeGreaterThan(3_500_000);
    await harness.service.cancel(delayed.workflow);

    const silent = await scripted(ImperativeWorkflow, () => new Error('no verb'));
    await harness.waitForState(silent.workflow.id, 'paused');
    expect(desk.escalations).toEqual(expect.arrayContaining(['skip me', 'later', 'no verb']));
  });

  // This test and the two job-options ones read the BullMQ jobs: not on the local transport.
  itIf(testTransport !== 'local')(
    'backoff waits land on the BullMQ delayed set: exponential 2 s, then 4 s',
    async () => {
      const { workflow } = await scripted(BackoffWorkflow, () => new Error('down'));
      await harness.waitForWorkflow(
        workflow.id,
        async () => (await harness.history(workflow.id)).length === 2,
      );
      const [, second] = await harness.history(workflow.id);
      const job = await harness.queue().getJob(second.id);
      expect(job?.opts.delay).toBeGreaterThan(1_900);
      expect(job?.opts.delay).toBeLessThanOrEqual(2_000);
      expect(await job?.getState()).toBe('delayed');
      await harness.service.cancel(workflow);
    },
  );

  it('a throwing skipIf is a precondition exception: counted reattempts, then the terminal action', async () => {
    const order = await harness.dataSource.getRepository(Order).save({ status: 'explode' });
    const workflow = await harness.service.start(ThrowingSkipIfWorkflow, { hero: order });
    await harness.waitForState(workflow.id, 'finished');
    const history = await harness.history(workflow.id);
    expect(
      history.map(
        (e) => `${e.stepName}:${e.state}/${e.outcome}:${String(e.metadata?.reattemptReason)}`,
      ),
    ).toEqual([
      'guarded:completed/reattempted:precondition',
      'guarded:completed/reattempted:precondition',
      'guarded:skipped/skipped:undefined',
      'after:completed/success:undefined',
    ]);
  });

  it('a hero type naming no entity fails in prepare: failed/failed, and the policy decides the workflow', async () => {
    const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    // hero_type changes in the start's own transaction, before its first job is enqueued (after
    // the commit), so no step ever runs with the real hero.
    const workflow = await harness.dataSource.transaction(async (manager) => {
      const started = await harness.service.start(PolicyWorkflow, { hero: order, manager });
      await manager
        .getRepository(WorkflowEntity)
        .update({ id: started.id }, { heroType: 'Vanished' });
      return started;
    });
    await harness.waitForState(workflow.id, 'canceled', 20_000);
    // Every prepare fails: 3 counted reattempts, then the terminal cancel.
    const failed = (await harness.history(workflow.id)).filter((e) => e.state === 'failed');
    expect(failed.map((e) => e.outcome)).toEqual(['failed', 'failed', 'failed', 'failed']);
    expect(failed.map((e) => e.metadata?.reattemptReason)).toEqual([
      'exception_policy',
      'exception_policy',
      'exception_policy',
      undefined,
    ]);
    expect(failed[3].errorMessage).toContain("hero_type 'Vanished'");
  });

  itIf(testTransport !== 'local')(
    'job options merge class < instance < step, route steps to their queue, and survive across steps',
    async () => {
      const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
      const workflow = await harness.service.start(RoutedWorkflow, {
        hero: order,
        stepJobOptions: { priority: 20 },
      });
      expect(workflow.metadata).toEqual({ stepJobOptions: { priority: 20 } });
      const hold = (await harness.service.currentExecution(workflow))!;
      const holdJob = await harness.queue().getJob(hold.id);
      expect([holdJob?.queueName, holdJob?.opts.priority]).toEqual(['geneva-drive', 20]);

      await harness.service.skip(workflow);
      await harness.waitForState(workflow.id, 'finished');
      const [, urgent, normal] = await harness.history(workflow.id);
      const urgentJob = await harness.queue('critical').getJob(urgent.id);
      expect([urgentJob?.queueName, urgentJob?.opts.priority, await urgentJob?.getState()]).toEqual(
        ['critical', 1, 'completed'],
      );
      const normalJob = await harness.queue().getJob(normal.id);
      expect(normalJob?.opts.priority).toBe(20);
    },
  );

  itIf(testTransport !== 'local')(
    'setStepJobOptions() changes the instance options for the next enqueue; null clears them',
    async () => {
      const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
      const workflow = await harness.service.start(RoutedWorkflow, { hero: order });
      const updated = await harness.service.setStepJobOptions(workflow, { priority: 7 });
      expect(updated.metadata).toEqual({ stepJobOptions: { priority: 7 } });
      await harness.service.pause(workflow);
      await harness.service.resume(workflow);
      const hold = (await harness.service.currentExecution(workflow))!;
      expect((await harness.queue().getJob(hold.jobId!))?.opts.priority).toBe(7);
      expect((await harness.service.setStepJobOptions(workflow, null)).metadata).toBeNull();
      await expect(
        harness.service.setStepJobOptions(workflow, { piority: 1 } as never),
      ).rejects.toThrow(/piority/);
      await harness.service.cancel(workflow);
    },
  );
});

// A producer (worker: false) and then a consumer process on one queue: not on the local transport
// (one process per deployment), whose priority order test/unit/local-step-job.queue.spec covers.
describeIf(testTransport !== 'local')(
  `priorities on a real worker (${testDatabaseLabel} + BullMQ)`,
  () => {
    it('a high-priority step runs ahead of a backlog of low-priority jobs', async () => {
      const producer = await EngineHarness.boot({
        workflows: [PrioritizedWorkflow],
        providers: [StepScript],
        entities: [Order],
        options: { worker: false },
      });
      const orders = producer.dataSource.getRepository(Order);
      const backlog: Order[] = [];
      for (let i = 0; i < 15; i++) {
        const order = await orders.save({ status: 'backlog' });
        backlog.push(order);
        await producer.service.start(PrioritizedWorkflow, {
          hero: order,
          stepJobOptions: { priority: 10 },
        });
      }
      const urgent = await orders.save({ status: 'urgent' });
      await producer.service.start(PrioritizedWorkflow, {
        hero: urgent,
        stepJobOptions: { priority: 1 },
      });
      await producer.closeApp();

      const consumer = await EngineHarness.boot({
        workflows: [PrioritizedWorkflow],
        providers: [StepScript],
        entities: [Order],
        options: { queues: { prio: { concurrency: 1 } } },
        reuse: { schema: producer.schema, prefix: producer.prefix },
      });
      try {
        const consumerScript = consumer.get(StepScript);
        const all = [...backlog, urgent];
        const deadline = Date.now() + 20_000;
        while (consumerScript.calls.length < all.length && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        expect(consumerScript.calls).toHaveLength(all.length);
        expect(consumerScript.calls[0].heroId).toBe(urgent.id);
      } finally {
        await consumer.queue('prio').obliterate({ force: true });
        await consumer.close();
      }
    });
  },
);
