import {
  StepExecutionEntity,
  StepNotDefinedError,
  WorkflowAlreadyOngoingError,
  type WorkflowEntity,
} from '../../lib';
import { Order } from '../fixtures/order.entity';
import { ScriptedWorkflow } from '../fixtures/scripted.workflows';
import { StepScript } from '../fixtures/step-script';
import { testDatabaseLabel } from './support/database';
import { describeIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { testTransport } from './support/transport';

/**
 * The runner driven directly (`worker: false`: this process only enqueues), so each test decides
 * exactly when and how often an execution runs; its tests count the jobs in BullMQ. Not on the
 * local transport, which refuses `worker: false` (it would run nothing) and has no BullMQ jobs.
 */
describeIf(testTransport !== 'local')(
  `runner guards, races and transactions (${testDatabaseLabel} + Redis)`,
  () => {
    let harness: EngineHarness;
    let script: StepScript;

    beforeAll(async () => {
      harness = await EngineHarness.boot({
        workflows: [ScriptedWorkflow],
        providers: [StepScript],
        entities: [Order],
        options: { worker: false },
      });
      script = harness.get(StepScript);
    });

    afterAll(() => harness?.close());

    const orders = () => harness.dataSource.getRepository(Order);

    async function current(workflow: WorkflowEntity): Promise<StepExecutionEntity> {
      const execution = await harness.service.currentExecution(workflow);
      if (!execution) throw new Error('no current execution');
      return execution;
    }

    it('a duplicate delivery of the same job runs the step once', async () => {
      const order = await orders().save({ status: 'new' });
      const workflow = await harness.service.start(ScriptedWorkflow, { hero: order });
      const execution = await current(workflow);
      await Promise.all([
        harness.runner.performStep(execution.id),
        harness.runner.performStep(execution.id),
        harness.runner.performStep(execution.id),
      ]);
      await harness.runner.performStep(execution.id);
      expect(script.callsFor(order)).toEqual(['a']);
      const history = await harness.history(workflow.id);
      expect(history.map((e) => `${e.stepName}:${e.state}`)).toEqual([
        'a:completed',
        'b:scheduled',
      ]);
    });

    it('an unknown execution id is harmless', async () => {
      await expect(
        harness.runner.performStep('01900000-0000-7000-8000-00000000abcd'),
      ).resolves.toBeUndefined();
    });

    it('a deleted hero cancels the workflow without running the step', async () => {
      const order = await orders().save({ status: 'new' });
      const workflow = await harness.service.start(ScriptedWorkflow, { hero: order });
      const execution = await current(workflow);
      await orders().delete(order.id);
      await harness.runner.performStep(execution.id);
      expect((await harness.service.find(workflow.id))?.state).toBe('canceled');
      const [row] = await harness.history(workflow.id);
      expect([row.state, row.outcome]).toEqual(['canceled', 'canceled']);
      expect(script.callsFor(order)).toEqual([]);
    });

    it('a step missing from the class pauses the workflow and raises StepNotDefinedError', async () => {
      const order = await orders().save({ status: 'new' });
      const workflow = await harness.service.start(ScriptedWorkflow, { hero: order });
      const execution = await current(workflow);
      await harness.dataSource
        .getRepository(StepExecutionEntity)
        .update({ id: execution.id }, { stepName: 'deletedStep' });
      const error = await harness.runner.performStep(execution.id).then(
        () => null,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(StepNotDefinedError);
      expect((error as StepNotDefinedError).stepExecution?.id).toBe(execution.id);
      expect((error as Error).message).toContain(
        "Step 'deletedStep' is not defined in ScriptedWorkflow",
      );
      expect((await harness.service.find(workflow.id))?.state).toBe('paused');
      const [row] = await harness.history(workflow.id);
      expect([row.state, row.outcome, row.errorMessage]).toEqual([
        'failed',
        'failed',
        expect.stringContaining('deletedStep'),
      ]);
    });

    it('two concurrent start() calls for one hero: exactly one wins, every time', async () => {
      for (let round = 0; round < 25; round++) {
        const order = await orders().save({ status: 'new' });
        const results = await Promise.allSettled([
          harness.service.start(ScriptedWorkflow, { hero: order }),
          harness.service.start(ScriptedWorkflow, { hero: order }),
        ]);
        const won = results.filter((result) => result.status === 'fulfilled');
        const lost = results.filter((result) => result.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect(lost[0].reason).toBeInstanceOf(WorkflowAlreadyOngoingError);
        expect(
          await harness.service.list({ workflow: ScriptedWorkflow, hero: order }),
        ).toHaveLength(1);
      }
    });

    it('two app instances on one database racing start() and operator verbs: one workflow per hero, no lock errors', async () => {
      // On SQLite the two DataSources are two connections to one file: the library's mutex is per
      // file, so their transactions take turns instead of failing with SQLITE_BUSY.
      const other = await EngineHarness.boot({
        workflows: [ScriptedWorkflow],
        providers: [StepScript],
        entities: [Order],
        options: { worker: false },
        reuse: { schema: harness.schema, prefix: harness.prefix },
      });
      try {
        for (let round = 0; round < 10; round++) {
          const order = await orders().save({ status: 'new' });
          const results = await Promise.allSettled([
            harness.service.start(ScriptedWorkflow, { hero: order }),
            other.service.start(ScriptedWorkflow, { hero: order }),
            harness.service.start(ScriptedWorkflow, { hero: order }),
          ]);
          const won = results.filter((result) => result.status === 'fulfilled');
          expect(won).toHaveLength(1);
          for (const lost of results.filter((result) => result.status === 'rejected')) {
            expect(lost.reason).toBeInstanceOf(WorkflowAlreadyOngoingError);
          }
          const workflow = won[0].value;
          await Promise.all([
            harness.service.pause(workflow),
            other.service.setStepJobOptions(workflow, { priority: 3 }),
            harness.service.setStepJobOptions(workflow, { priority: 4 }),
          ]);
          await other.service.cancel(workflow);
          expect((await harness.service.find(workflow.id))?.state).toBe('canceled');
        }
      } finally {
        await other.closeApp();
      }
    });

    it('a second start for the same hero is allowed once the first is over, or with allowMultiple', async () => {
      const order = await orders().save({ status: 'new' });
      const first = await harness.service.start(ScriptedWorkflow, { hero: order });
      await expect(harness.service.start(ScriptedWorkflow, { hero: order })).rejects.toThrow(
        WorkflowAlreadyOngoingError,
      );
      await harness.service.start(ScriptedWorkflow, { hero: order, allowMultiple: true });
      await harness.service.cancel(first);
      await expect(harness.service.start(ScriptedWorkflow, { hero: order })).resolves.toBeDefined();
    });

    it('a workflow started inside a rolled-back transaction leaves no row and enqueues nothing', async () => {
      const order = await orders().save({ status: 'new' });
      const countBefore = await harness.queue().count();
      let startedId: string | null = null;
      await expect(
        harness.dataSource.transaction(async (manager) => {
          startedId = (await harness.service.start(ScriptedWorkflow, { hero: order, manager })).id;
          throw new Error('caller rolls back');
        }),
      ).rejects.toThrow('caller rolls back');
      expect(startedId).not.toBeNull();
      expect(await harness.service.find(startedId!)).toBeNull();
      expect(await harness.queue().count()).toBe(countBefore);
    });

    it("a workflow started in a caller's transaction is enqueued only after it commits", async () => {
      const order = await orders().save({ status: 'new' });
      let jobSeenBeforeCommit: unknown = 'unset';
      let executionId = '';
      await harness.dataSource.transaction(async (manager) => {
        const workflow = await harness.service.start(ScriptedWorkflow, { hero: order, manager });
        const execution = await manager.findOneByOrFail(StepExecutionEntity, {
          workflowId: workflow.id,
        });
        executionId = execution.id;
        jobSeenBeforeCommit = (await harness.queue().getJob(execution.id)) ?? null;
      });
      expect(jobSeenBeforeCommit).toBeNull();
      const deadline = Date.now() + 5_000;
      while (!(await harness.queue().getJob(executionId)) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(await harness.queue().getJob(executionId)).toBeDefined();
    });

    it('a failed start inside a caller transaction leaves that transaction usable', async () => {
      const order = await orders().save({ status: 'new' });
      await harness.service.start(ScriptedWorkflow, { hero: order });
      await harness.dataSource.transaction(async (manager) => {
        await expect(
          harness.service.start(ScriptedWorkflow, { hero: order, manager }),
        ).rejects.toThrow(WorkflowAlreadyOngoingError);
        await manager.getRepository(Order).update(order.id, { status: 'still-usable' });
      });
      expect((await orders().findOneByOrFail({ id: order.id })).status).toBe('still-usable');
    });
  },
);
