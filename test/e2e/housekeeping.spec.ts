import type { INestApplication } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Logger as TypeOrmLogger } from 'typeorm';
import { DataSource } from 'typeorm';
import {
  GenevaDriveModule,
  GENEVA_DRIVE_ENTITIES,
  GENEVA_DRIVE_MIGRATIONS,
  HOUSEKEEPING_CRON_JOB_NAME,
  HousekeepingService,
  ModuleOptionsError,
  SignalEntity,
  StepConfigurationError,
  StepExecutionEntity,
  WorkflowEntity,
  WorkflowService,
  type ErrorReportContext,
  type GaugeReporter,
  type HousekeepingResult,
} from 'nestjs-geneva-drive';
import { GenevaDriveTestingModule, WorkflowTestHelper } from 'nestjs-geneva-drive/testing';
import {
  HOUSEKEEPING_WORKFLOWS,
  HousekeepingDelayedWorkflow,
  HousekeepingQuickWorkflow,
  HousekeepingResumableWorkflow,
  HousekeepingSignalWorkflow,
  HousekeepingTwoStepWorkflow,
} from '../fixtures/housekeeping.workflows';
import { Order } from '../fixtures/order.entity';
import { IterationScript } from '../fixtures/resumable.workflows';
import { StepScript } from '../fixtures/step-script';
import {
  createSchema,
  dataSourceOptions,
  dropSchema,
  mariadbConnection,
  postgresConnection,
  testDatabase,
  testPooler,
} from './support/database';
import { describeIf, itIf } from './support/describe-if';
import { Deferred } from './support/deferred';
import { EngineHarness } from './support/engine-harness';
import { openTestRedis, testPrefix } from './support/redis';
import { testTransport } from './support/transport';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const ago = (ms: number) => new Date(Date.now() - ms);
const ZERO: HousekeepingResult = {
  workflowsCleanedUp: 0,
  stepExecutionsCleanedUp: 0,
  signalsCleanedUp: 0,
  stuckInProgressRecovered: 0,
  stuckScheduledRecovered: 0,
  signalsExpired: 0,
};

/** Shared helpers over one harness. */
function helpers(get: () => EngineHarness) {
  const executions = () => get().dataSource.getRepository(StepExecutionEntity);
  const workflows = () => get().dataSource.getRepository(WorkflowEntity);
  const newOrder = () => get().dataSource.getRepository(Order).save({ status: 'new' });
  const housekeeping = () => get().get(HousekeepingService);
  const current = async (workflowId: string) => (await get().service.currentExecution(workflowId))!;

  /**
   * Starts a two-step workflow whose `work` step hangs on its first run (a worker that died
   * mid-step, as far as the database can tell) and makes it look stuck for 2 hours.
   */
  async function stuckInProgress(script: StepScript) {
    const order = await newOrder();
    const entered = new Deferred();
    const release = new Deferred();
    let runs = 0;
    script.plan(order, {
      work: async () => {
        if (runs++ > 0) return;
        entered.resolve();
        await release.promise;
      },
    });
    const workflow = await get().service.start(HousekeepingTwoStepWorkflow, { hero: order });
    await entered.promise;
    const execution = await current(workflow.id);
    expect(execution.state).toBe('in_progress');
    await executions().update(execution.id, { startedAt: ago(2 * HOUR) });
    return { order, workflow, execution, release: () => release.resolve() };
  }

  /**
   * A step an hour away whose delayed job is lost, and whose due time is 20 minutes past. The job
   * is removed from BullMQ: the local transport's jobs live in its process and are lost only with
   * it (local-transport.spec reads them back at the next boot), so tests of lost jobs skip there.
   */
  async function stuckScheduled(options: { removeJob?: boolean } = {}) {
    const order = await newOrder();
    const workflow = await get().service.start(HousekeepingDelayedWorkflow, { hero: order });
    const execution = await current(workflow.id);
    if (options.removeJob ?? true) await get().queue().remove(execution.jobId!);
    await executions().update(execution.id, { scheduledFor: ago(20 * MINUTE) });
    return { order, workflow, execution };
  }

  return {
    executions,
    workflows,
    newOrder,
    housekeeping,
    current,
    stuckInProgress,
    stuckScheduled,
  };
}

describe('housekeeping (PostgreSQL + BullMQ), reattempt', () => {
  let harness: EngineHarness;
  let script: StepScript;
  let iterations: IterationScript;
  const reported: Array<{ error: Error; context: ErrorReportContext }> = [];
  const logs: string[] = [];
  const h = helpers(() => harness);

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: HOUSEKEEPING_WORKFLOWS,
      providers: [StepScript, IterationScript],
      entities: [Order],
      options: {
        // Small batches, so every pass pages.
        housekeeping: { enabled: false, batchSize: 2 },
        errorReporter: (error, context) => {
          reported.push({ error, context });
        },
        logger: {
          log: (message: unknown) => logs.push(String(message)),
          warn: (message: unknown) => logs.push(String(message)),
          error: (message: unknown) => logs.push(String(message)),
        },
      },
    });
    script = harness.get(StepScript);
    iterations = harness.get(IterationScript);
  });

  afterAll(() => harness?.close());

  describe('cleanup', () => {
    it('deletes finished and canceled workflows older than the cutoff with their executions and signals, in batches', async () => {
      const finish = async (workflow: WorkflowEntity) =>
        harness.waitForState(workflow.id, 'finished');
      // Old enough: five quick ones, one that consumed a signal, one canceled.
      const old: WorkflowEntity[] = [];
      for (let i = 0; i < 5; i++) {
        old.push(
          await finish(
            await harness.service.start(HousekeepingQuickWorkflow, { hero: await h.newOrder() }),
          ),
        );
      }
      const signaled = await harness.service.start(HousekeepingSignalWorkflow, {
        hero: await h.newOrder(),
      });
      await harness.waitForWorkflow(
        signaled.id,
        async (w) => (await h.current(w.id))?.state === 'waiting',
      );
      await harness.service.signal(signaled, 'go');
      old.push(await finish(signaled));
      const canceled = await harness.service.start(HousekeepingDelayedWorkflow, {
        hero: await h.newOrder(),
      });
      old.push(await harness.service.cancel(canceled));
      // Kept: finished recently (after the cutoff), paused long ago, ready long ago.
      const recent = await finish(
        await harness.service.start(HousekeepingQuickWorkflow, { hero: await h.newOrder() }),
      );
      const paused = await harness.service.pause(
        await harness.service.start(HousekeepingDelayedWorkflow, { hero: await h.newOrder() }),
      );
      const ready = await harness.service.start(HousekeepingDelayedWorkflow, {
        hero: await h.newOrder(),
      });

      for (const workflow of [...old, paused])
        await h.workflows().update(workflow.id, { transitionedAt: ago(40 * DAY) });
      await h.workflows().update(recent.id, { transitionedAt: ago(10 * DAY) });
      await h.workflows().update(ready.id, { createdAt: ago(400 * DAY) });
      const oldIds = old.map((w) => w.id);
      const expectedExecutions = (
        await Promise.all(oldIds.map((id) => h.executions().countBy({ workflowId: id })))
      ).reduce((a, b) => a + b, 0);
      expect(expectedExecutions).toBeGreaterThanOrEqual(7);

      const deletes: string[] = [];
      const dataSource = harness.dataSource as unknown as { logger: TypeOrmLogger };
      const originalLogger = dataSource.logger;
      dataSource.logger = new Proxy(originalLogger, {
        get: (target, key: keyof TypeOrmLogger) =>
          key === 'logQuery'
            ? (query: string, parameters?: unknown[]) => {
                if (/^DELETE FROM/i.test(query))
                  deletes.push(`${query} -- ${JSON.stringify(parameters)}`);
              }
            : target[key],
      });
      let result: HousekeepingResult;
      try {
        result = await h.housekeeping().run();
      } finally {
        dataSource.logger = originalLogger;
      }

      expect(result).toMatchObject({
        workflowsCleanedUp: 7,
        stepExecutionsCleanedUp: expectedExecutions,
        signalsCleanedUp: 1,
      });
      expect(await h.workflows().countBy(oldIds.map((id) => ({ id })))).toBe(0);
      expect(await h.executions().countBy(oldIds.map((workflowId) => ({ workflowId })))).toBe(0);
      expect(
        await harness.dataSource.getRepository(SignalEntity).countBy({ workflowId: signaled.id }),
      ).toBe(0);
      for (const kept of [recent, paused, ready]) {
        expect(await harness.service.find(kept.id)).not.toBeNull();
        expect(await h.executions().countBy({ workflowId: kept.id })).toBeGreaterThan(0);
      }
      // Children are deleted explicitly (MariaDB has no cascades), at most batchSize (2) rows per statement.
      const workflowDeletes = deletes.filter((q) => q.includes('geneva_drive_workflows'));
      const executionDeletes = deletes.filter((q) => q.includes('geneva_drive_step_executions'));
      const signalDeletes = deletes.filter((q) => q.includes('geneva_drive_signals'));
      expect(workflowDeletes.length).toBeGreaterThanOrEqual(4);
      expect(executionDeletes.length).toBeGreaterThanOrEqual(Math.ceil(expectedExecutions / 2));
      expect(signalDeletes.length).toBeGreaterThanOrEqual(1);
      for (const statement of deletes) {
        const ids = JSON.parse(statement.split(' -- ')[1]) as unknown[];
        expect(
          ids.filter((p) => typeof p === 'string' && /^[0-9a-f-]{36}$/.test(p)).length,
        ).toBeLessThanOrEqual(2);
      }
    });

    // A second app on the schema with worker: false, which the local transport refuses (one
    // process per deployment).
    itIf(testTransport !== 'local')(
      'does nothing when deleteCompletedWorkflowsAfter is null (a separate app)',
      async () => {
        const other = await EngineHarness.boot({
          workflows: HOUSEKEEPING_WORKFLOWS,
          providers: [StepScript, IterationScript],
          entities: [Order],
          reuse: { schema: harness.schema, prefix: harness.prefix },
          options: {
            housekeeping: { enabled: false, deleteCompletedWorkflowsAfter: null },
            worker: false,
          },
        });
        try {
          const done = await harness.waitForState(
            (await harness.service.start(HousekeepingQuickWorkflow, { hero: await h.newOrder() }))
              .id,
            'finished',
          );
          await h.workflows().update(done.id, { transitionedAt: ago(400 * DAY) });
          expect(await other.get(HousekeepingService).run()).toEqual(ZERO);
          expect(await harness.service.find(done.id)).not.toBeNull();
        } finally {
          await other.closeApp();
        }
      },
    );
  });

  describe('stuck in_progress', () => {
    it('reattempt: the execution ends completed/recovered, a fresh one runs the step, the workflow continues', async () => {
      const stuck = await h.stuckInProgress(script);
      const result = await h.housekeeping().run();
      expect(result.stuckInProgressRecovered).toBe(1);

      await harness.waitForState(stuck.workflow.id, 'finished');
      stuck.release();
      const history = await harness.history(stuck.workflow.id);
      expect(history.map((e) => `${e.stepName}:${e.state}/${e.outcome}`)).toEqual([
        'work:completed/recovered',
        'work:completed/success',
        'after:completed/success',
      ]);
      expect(history[0].id).toBe(stuck.execution.id);
      expect(history[0].completedAt).not.toBeNull();
      expect(history[0].finishedAt).not.toBeNull();
      expect(history[1].continuesFromId).toBeNull();
      // The hung worker finishing later changes nothing.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await harness.history(stuck.workflow.id)).map((e) => e.outcome)).toEqual([
        'recovered',
        'success',
        'success',
      ]);
    });

    it('a fresh in_progress execution (younger than the threshold) is left alone', async () => {
      const order = await h.newOrder();
      const entered = new Deferred();
      const release = new Deferred();
      script.plan(order, {
        work: async () => {
          entered.resolve();
          await release.promise;
        },
      });
      const workflow = await harness.service.start(HousekeepingTwoStepWorkflow, { hero: order });
      await entered.promise;
      await h
        .executions()
        .update((await h.current(workflow.id)).id, { startedAt: ago(50 * MINUTE) });
      expect((await h.housekeeping().run()).stuckInProgressRecovered).toBe(0);
      release.resolve();
      await harness.waitForState(workflow.id, 'finished');
      expect((await harness.history(workflow.id)).map((e) => e.outcome)).toEqual([
        'success',
        'success',
      ]);
    });

    it('a resumable step continues from its cursor through a successor', async () => {
      const order = await h.newOrder();
      const entered = new Deferred();
      const release = new Deferred();
      iterations.plan(order, async (iter, ctx) => {
        const first = ctx.stepExecution.continuesFromId === null;
        await iter.iterateOver([...Array(10).keys()], async (item) => {
          iterations.record(order, item);
          if (first && item === 3) {
            entered.resolve();
            await release.promise;
            throw new Error('the worker died');
          }
        });
      });
      const workflow = await harness.service.start(HousekeepingResumableWorkflow, { hero: order });
      await entered.promise;
      const stuck = await h.current(workflow.id);
      await h.executions().update(stuck.id, { startedAt: ago(2 * HOUR), cursor: 3 });

      expect((await h.housekeeping().run()).stuckInProgressRecovered).toBe(1);
      await harness.waitForState(workflow.id, 'finished');
      release.resolve();

      const walk = (await harness.history(workflow.id)).filter((e) => e.stepName === 'walk');
      expect(walk.map((e) => `${e.state}/${e.outcome}`)).toEqual([
        'completed/recovered',
        'completed/success',
      ]);
      expect(walk[1].continuesFromId).toBe(stuck.id);
      expect(walk[1].cursor).toBe(10);
      // 0..3 by the stuck execution; the successor started at cursor 3 (item 3 redone, nothing before it).
      expect(iterations.itemsOf(order)).toEqual([0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 9]);
    });

    // Looks for the successor's BullMQ job: none on the local transport.
    itIf(testTransport !== 'local')(
      'a paused workflow stays paused: the resumable successor waits without a job until resume()',
      async () => {
        const order = await h.newOrder();
        const entered = new Deferred();
        const release = new Deferred();
        iterations.plan(order, async (iter, ctx) => {
          const first = ctx.stepExecution.continuesFromId === null;
          await iter.iterateOver([0, 1, 2, 3], async (item) => {
            iterations.record(order, item);
            if (first && item === 1) {
              entered.resolve();
              await release.promise;
              throw new Error('the worker died');
            }
          });
        });
        const workflow = await harness.service.start(HousekeepingResumableWorkflow, {
          hero: order,
        });
        await entered.promise;
        const stuck = await h.current(workflow.id);
        await harness.service.pause(workflow);
        await h.executions().update(stuck.id, { startedAt: ago(2 * HOUR) });

        expect((await h.housekeeping().run()).stuckInProgressRecovered).toBe(1);
        release.resolve();
        const paused = (await harness.service.find(workflow.id))!;
        expect(paused).toMatchObject({
          state: 'paused',
          currentStepName: null,
          nextStepName: 'walk',
        });
        const successor = await h.current(workflow.id);
        expect(successor).toMatchObject({
          state: 'scheduled',
          continuesFromId: stuck.id,
          cursor: 1,
          jobId: successor.id,
        });
        expect(await harness.queue().getJob(successor.id)).toBeUndefined();

        await harness.service.resume(workflow);
        await harness.waitForState(workflow.id, 'finished');
        expect(iterations.itemsOf(order)).toEqual([0, 1, 1, 2, 3]);
        const walk = (await harness.history(workflow.id)).filter((e) => e.stepName === 'walk');
        expect(
          walk.map((e) => `${e.state}/${e.outcome}:${e.jobId === e.id ? 'first' : 'reenqueued'}`),
        ).toEqual(['completed/recovered:first', 'completed/success:reenqueued']);
      },
    );

    it('a waitFor step: the recovered execution keeps its signal pin and the fresh one re-claims the signal at the gate', async () => {
      const order = await h.newOrder();
      const entered = new Deferred();
      const release = new Deferred();
      let runs = 0;
      script.plan(order, {
        act: async (ctx) => {
          expect(ctx.receivedSignal?.name).toBe('go');
          if (runs++ > 0) return;
          entered.resolve();
          await release.promise;
        },
      });
      const workflow = await harness.service.start(HousekeepingSignalWorkflow, { hero: order });
      await harness.waitForWorkflow(
        workflow.id,
        async (w) => (await h.current(w.id))?.state === 'waiting',
      );
      const signal = await harness.service.signal(workflow, 'go', { payload: { n: 1 } });
      await entered.promise;
      const stuck = await h.current(workflow.id);
      expect(stuck.signalId).toBe(signal.id);
      await h.executions().update(stuck.id, { startedAt: ago(2 * HOUR) });

      expect((await h.housekeeping().run()).stuckInProgressRecovered).toBe(1);
      await harness.waitForState(workflow.id, 'finished');
      release.resolve();

      const history = await harness.history(workflow.id);
      expect(history.map((e) => `${e.state}/${e.outcome}:${e.signalId}`)).toEqual([
        `completed/recovered:${signal.id}`,
        `completed/success:${signal.id}`,
      ]);
      expect(history[1].continuesFromId).toBeNull();
      const [stored] = await harness.service.signals(workflow.id);
      expect(stored).toMatchObject({ id: signal.id, state: 'consumed', claimed: 2, consumed: 1 });
    });

    it('a row that fails is reported and skipped, the others are recovered, and a later run retries it', async () => {
      reported.length = 0;
      const broken = await h.stuckInProgress(script);
      const healthy = await h.stuckInProgress(script);
      await h.workflows().update(broken.workflow.id, { type: 'UnregisteredWorkflow' });

      expect((await h.housekeeping().run()).stuckInProgressRecovered).toBe(1);
      expect(reported).toHaveLength(1);
      expect(reported[0].error).toBeInstanceOf(StepConfigurationError);
      expect(reported[0].error.message).toMatch(
        /no workflow is registered as 'UnregisteredWorkflow'/,
      );
      expect(reported[0].context).toMatchObject({
        workflowId: broken.workflow.id,
        workflowClass: 'UnregisteredWorkflow',
        stepExecutionId: broken.execution.id,
        stepName: 'work',
        heroType: 'Order',
        heroId: String(broken.order.id),
      });
      await harness.waitForState(healthy.workflow.id, 'finished');
      expect((await h.executions().findOneByOrFail({ id: broken.execution.id })).state).toBe(
        'in_progress',
      );

      await h.workflows().update(broken.workflow.id, { type: 'HousekeepingTwoStepWorkflow' });
      expect((await h.housekeeping().run()).stuckInProgressRecovered).toBe(1);
      await harness.waitForState(broken.workflow.id, 'finished');
      broken.release();
      healthy.release();
    });
  });

  // Lost jobs (stuckScheduled): not on the local transport.
  describeIf(testTransport !== 'local')('stuck scheduled', () => {
    it('reattempt: the same execution is enqueued again under a new job id and runs', async () => {
      const stuck = await h.stuckScheduled();
      const result = await h.housekeeping().run();
      expect(result.stuckScheduledRecovered).toBe(1);
      await harness.waitForState(stuck.workflow.id, 'finished');
      const history = await harness.history(stuck.workflow.id);
      expect(history.map((e) => `${e.id}:${e.state}/${e.outcome}:${e.jobId}`)).toEqual([
        `${stuck.execution.id}:completed/success:${stuck.execution.id}_1`,
      ]);
    });

    it('pages through more stuck rows than batchSize, oldest first; paused workflows and fresh rows are left alone', async () => {
      const rows = [await h.stuckScheduled(), await h.stuckScheduled(), await h.stuckScheduled()];
      // Oldest first: the last one created is the most overdue.
      await h.executions().update(rows[2].execution.id, { scheduledFor: ago(3 * HOUR) });
      const paused = await h.stuckScheduled({ removeJob: false });
      await harness.service.pause(paused.workflow);
      const fresh = await harness.service.start(HousekeepingDelayedWorkflow, {
        hero: await h.newOrder(),
      });
      const freshExecution = await h.current(fresh.id);
      await h.executions().update(freshExecution.id, { scheduledFor: ago(10 * MINUTE) });

      logs.length = 0;
      const result = await h.housekeeping().run();
      expect(result.stuckScheduledRecovered).toBe(3);
      for (const row of rows) await harness.waitForState(row.workflow.id, 'finished');
      const recoveredInOrder = logs
        .filter((line) => line.startsWith('[Housekeeping] Reattempting'))
        .map((line) => /execution_id=(\S+)/.exec(line)![1]);
      expect(recoveredInOrder).toEqual([rows[2], rows[0], rows[1]].map((row) => row.execution.id));

      const pausedExecution = await h.executions().findOneByOrFail({ id: paused.execution.id });
      expect(pausedExecution).toMatchObject({ state: 'scheduled', jobId: paused.execution.id });
      expect((await h.executions().findOneByOrFail({ id: freshExecution.id })).jobId).toBe(
        freshExecution.id,
      );
      await harness.service.cancel(fresh);
      await harness.service.cancel(paused.workflow);
    });
  });

  it('waiting executions are never stuck, however old', async () => {
    const workflow = await harness.service.start(HousekeepingSignalWorkflow, {
      hero: await h.newOrder(),
    });
    await harness.waitForWorkflow(
      workflow.id,
      async (w) => (await h.current(w.id))?.state === 'waiting',
    );
    const parked = await h.current(workflow.id);
    await h.executions().update(parked.id, {
      scheduledFor: ago(400 * DAY),
      startedAt: ago(400 * DAY),
      waitingSince: ago(400 * DAY),
    });
    expect(await h.housekeeping().run()).toMatchObject({
      stuckInProgressRecovered: 0,
      stuckScheduledRecovered: 0,
    });
    expect(await h.executions().findOneByOrFail({ id: parked.id })).toMatchObject({
      state: 'waiting',
      jobId: parked.id,
    });
    expect(await harness.history(workflow.id)).toHaveLength(1);
    await harness.service.cancel(workflow);
  });

  // Another process holds the lock, taken as the library takes it: on PostgreSQL a
  // transaction-scoped advisory lock in an open transaction (a session lock would stay on a pooled
  // server connection behind PgBouncer), on MariaDB a GET_LOCK on a connection of its own. SQLite's
  // lock is an in-process flag per database file, exercised by the two-app race below. The stuck row
  // is a lost job: not on the local transport.
  itIf(testDatabase !== 'sqlite' && testTransport !== 'local')(
    'a run finds the database-wide lock held and skips the tick; the next run recovers',
    async () => {
      const stuck = await h.stuckScheduled();
      const mariadb = testDatabase === 'mariadb';
      const holder = new DataSource(
        mariadb ? { ...mariadbConnection, database: harness.schema } : postgresConnection,
      );
      await holder.initialize();
      const runner = holder.createQueryRunner();
      await runner.connect();
      const key = mariadb
        ? [`geneva_drive_housekeeping:${harness.schema}`]
        : [0x4744484b, `${harness.schema}.geneva_drive_workflows`];
      try {
        if (!mariadb) await runner.startTransaction();
        const [{ locked }] = (await runner.query(
          mariadb
            ? 'SELECT GET_LOCK(?, 0) AS locked'
            : 'SELECT pg_try_advisory_xact_lock($1::int, hashtext($2::text)) AS locked',
          key,
        )) as Array<{ locked: boolean | number }>;
        expect(Boolean(locked)).toBe(true);
        expect(await h.housekeeping().run()).toEqual(ZERO);
        expect((await h.executions().findOneByOrFail({ id: stuck.execution.id })).jobId).toBe(
          stuck.execution.id,
        );
      } finally {
        if (mariadb) await runner.query('SELECT RELEASE_LOCK(?)', key);
        else if (runner.isTransactionActive) await runner.commitTransaction();
        await runner.release();
        await holder.destroy();
      }
      expect((await h.housekeeping().run()).stuckScheduledRecovered).toBe(1);
      await harness.waitForState(stuck.workflow.id, 'finished');
    },
  );

  // Two processes, one with worker: false, and lost jobs: not on the local transport.
  itIf(testTransport !== 'local')(
    'concurrent runs in two processes never recover a row twice (raced, many rounds)',
    async () => {
      const other = await EngineHarness.boot({
        workflows: HOUSEKEEPING_WORKFLOWS,
        providers: [StepScript, IterationScript],
        entities: [Order],
        reuse: { schema: harness.schema, prefix: harness.prefix },
        // Steps run in the first app, whose script holds the plans.
        options: { housekeeping: { enabled: false, batchSize: 2 }, worker: false },
      });
      try {
        for (let round = 0; round < 8; round++) {
          const scheduled = [
            await h.stuckScheduled(),
            await h.stuckScheduled(),
            await h.stuckScheduled(),
          ];
          const inProgress = [await h.stuckInProgress(script), await h.stuckInProgress(script)];
          const results = await Promise.all([
            h.housekeeping().run(),
            other.get(HousekeepingService).run(),
            h.housekeeping().run(),
            other.get(HousekeepingService).run(),
          ]);
          const total = (key: keyof HousekeepingResult) =>
            results.reduce((sum, r) => sum + r[key], 0);
          expect(total('stuckScheduledRecovered')).toBe(3);
          expect(total('stuckInProgressRecovered')).toBe(2);
          for (const row of scheduled) {
            expect((await h.executions().findOneByOrFail({ id: row.execution.id })).jobId).toBe(
              `${row.execution.id}_1`,
            );
          }
          for (const row of inProgress) {
            await harness.waitForState(row.workflow.id, 'finished');
            row.release();
            const work = (await harness.history(row.workflow.id)).filter(
              (e) => e.stepName === 'work',
            );
            expect(work.map((e) => e.outcome)).toEqual(['recovered', 'success']);
          }
          for (const row of scheduled) await harness.waitForState(row.workflow.id, 'finished');
        }
      } finally {
        await other.closeApp();
      }
    },
  );
});

/** The housekeeping lock's key in pg_locks: "GDHK", then hashtext of the schema-qualified table. */
const HOUSEKEEPING_LOCKS_HELD = `
  SELECT count(*)::int AS n FROM pg_locks
  WHERE locktype = 'advisory' AND granted
    AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND classid = $1::bigint::oid
    AND objid = (hashtext($2::text)::bigint & 4294967295)::oid
    AND objsubid = 2`;

/** Backends waiting for a lock on a table (or index) of the schema. */
const WAITING_ON_SCHEMA = `
  SELECT count(DISTINCT l.pid)::int AS n FROM pg_locks l
  JOIN pg_class c ON c.oid = l.relation
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE l.locktype = 'relation' AND NOT l.granted AND n.nspname = $1`;

// Two processes of one deployment (two apps on one schema) race for a tick. The run that takes the
// lock is held inside it by a transaction that locks the engine's tables, so the other run must
// find the lock taken; afterwards the lock must be free again on every connection. PostgreSQL only
// (LOCK TABLE and pg_locks make the race observable); the test-pgbouncer stage runs it through
// PgBouncer in transaction mode, where a session-level advisory lock excludes nothing (lock and
// unlock land on different server connections) and stays behind on a pooled connection. Not on the
// local transport, which refuses the second app's worker: false (one process per deployment).
describeIf(testDatabase === 'postgres' && testTransport !== 'local')(
  `housekeeping lock, two apps on one schema (PostgreSQL${testPooler ? ' through PgBouncer' : ''})`,
  () => {
    let apps: EngineHarness[] = [];
    const logs: string[][] = [[], []];
    const capture = (into: string[]) => ({
      log: (message: unknown) => into.push(String(message)),
      warn: (message: unknown) => into.push(String(message)),
      error: (message: unknown) => into.push(String(message)),
    });

    beforeAll(async () => {
      const first = await EngineHarness.boot({
        workflows: HOUSEKEEPING_WORKFLOWS,
        providers: [StepScript, IterationScript],
        entities: [Order],
        options: { housekeeping: { enabled: false }, logger: capture(logs[0]) },
      });
      apps = [first];
      apps.push(
        await EngineHarness.boot({
          workflows: HOUSEKEEPING_WORKFLOWS,
          providers: [StepScript, IterationScript],
          entities: [Order],
          reuse: { schema: first.schema, prefix: first.prefix },
          options: { housekeeping: { enabled: false }, worker: false, logger: capture(logs[1]) },
        }),
      );
    });

    afterAll(async () => {
      await apps[1]?.closeApp();
      await apps[0]?.close();
    });

    /** What app `i`'s runs reported since `mark`: 'Completed' or 'Skipped', in order. */
    const outcomes = (i: number, mark: number) =>
      logs[i]
        .slice(mark)
        .map((line) => /^\[Housekeeping\] (Completed|Skipped)\b/.exec(line)?.[1])
        .filter((outcome) => outcome !== undefined);

    it('two concurrent runs: exactly one runs and the other skips, then the lock is free again for either (raced, many rounds)', async () => {
      const schema = apps[0].schema;
      const key = [0x4744484b, `${schema}.geneva_drive_workflows`];
      const tables = [
        'geneva_drive_workflows',
        'geneva_drive_step_executions',
        'geneva_drive_signals',
      ]
        .map((table) => `"${schema}"."${table}"`)
        .join(', ');
      // One connection for the table locks and the observations: behind PgBouncer an open
      // transaction keeps its server connection, and the pool of four stays free for the runs.
      const blocker = apps[0].dataSource.createQueryRunner();
      await blocker.connect();
      const count = async (sql: string, params: unknown[]) =>
        ((await blocker.query(sql, params)) as Array<{ n: number }>)[0].n;
      const locksHeld = () => count(HOUSEKEEPING_LOCKS_HELD, key);
      const waiting = () => count(WAITING_ON_SCHEMA, [schema]);
      try {
        for (let round = 0; round < 5; round++) {
          const marks = logs.map((lines) => lines.length);
          await blocker.startTransaction();
          await blocker.query(`LOCK TABLE ${tables} IN ACCESS EXCLUSIVE MODE`);
          const settled: number[] = [];
          const runs = apps.map((app, i) =>
            app
              .get(HousekeepingService)
              .run()
              .then((result) => {
                settled.push(i);
                return result;
              }),
          );
          // Until the holder waits on the tables and the other run is done; two runs waiting on
          // the tables would mean both took the lock.
          for (;;) {
            const blocked = await waiting();
            if ((settled.length > 0 && blocked > 0) || blocked > 1 || settled.length > 1) break;
            await new Promise((resolve) => setTimeout(resolve, 10));
          }
          expect({ settled: settled.length, waiting: await waiting() }).toEqual({
            settled: 1,
            waiting: 1,
          });
          const skipper = settled[0];
          const holder = 1 - skipper;
          expect(await runs[skipper]).toEqual(ZERO);
          expect(outcomes(skipper, marks[skipper])).toEqual(['Skipped']);
          expect(await locksHeld()).toBe(1);

          await blocker.commitTransaction();
          await runs[holder];
          expect(outcomes(holder, marks[holder])).toEqual(['Completed']);
          // Released on the server: nothing is left behind on any (pooled) connection.
          expect(await locksHeld()).toBe(0);
          // And taken again, by either app, on whichever connection: a leaked lock makes one skip.
          for (const i of [0, 1, 1, 0]) {
            const mark = logs[i].length;
            await apps[i].get(HousekeepingService).run();
            expect(outcomes(i, mark)).toEqual(['Completed']);
          }
          expect(await locksHeld()).toBe(0);
        }
      } finally {
        if (blocker.isTransactionActive) await blocker.rollbackTransaction();
        await blocker.release();
      }
    });
  },
);

describe('housekeeping (PostgreSQL + BullMQ), cancel', () => {
  let harness: EngineHarness;
  let script: StepScript;
  const h = helpers(() => harness);

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: HOUSEKEEPING_WORKFLOWS,
      providers: [StepScript, IterationScript],
      entities: [Order],
      options: { housekeeping: { enabled: false, stuckRecoveryAction: 'cancel' } },
    });
    script = harness.get(StepScript);
  });

  afterAll(() => harness?.close());

  it('stuck in_progress: execution canceled/recovered, workflow canceled', async () => {
    const stuck = await h.stuckInProgress(script);
    expect((await h.housekeeping().run()).stuckInProgressRecovered).toBe(1);
    stuck.release();
    const workflow = await harness.service.find(stuck.workflow.id);
    expect(workflow).toMatchObject({ state: 'canceled', currentStepName: null });
    expect(workflow!.transitionedAt).not.toBeNull();
    const history = await harness.history(stuck.workflow.id);
    expect(history.map((e) => `${e.state}/${e.outcome}`)).toEqual(['canceled/recovered']);
    expect(history[0].canceledAt).not.toBeNull();
    expect(history[0].finishedAt).not.toBeNull();
  });

  // A lost job: not on the local transport.
  itIf(testTransport !== 'local')(
    'stuck scheduled: execution canceled/recovered, workflow canceled, nothing enqueued',
    async () => {
      const stuck = await h.stuckScheduled();
      expect((await h.housekeeping().run()).stuckScheduledRecovered).toBe(1);
      expect((await harness.service.find(stuck.workflow.id))!.state).toBe('canceled');
      const [execution] = await harness.history(stuck.workflow.id);
      expect(execution).toMatchObject({
        state: 'canceled',
        outcome: 'recovered',
        jobId: stuck.execution.id,
      });
    },
  );
});

describe('housekeeping gauges (PostgreSQL + BullMQ)', () => {
  let harness: EngineHarness;
  const gauges = new Map<string, number>();
  const reporter: GaugeReporter = {
    gauge: (name, value, tags) => gauges.set(tags ? `${name}{${tags.workflow}}` : name, value),
  };
  const h = helpers(() => harness);

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: HOUSEKEEPING_WORKFLOWS,
      providers: [StepScript, IterationScript],
      entities: [Order],
      options: { housekeeping: { enabled: false }, metrics: reporter },
    });
  });

  afterAll(() => harness?.close());

  it('reports workflow counts per state (total and per class), paused ratios and waiting executions', async () => {
    for (let i = 0; i < 3; i++) {
      await harness.waitForState(
        (await harness.service.start(HousekeepingQuickWorkflow, { hero: await h.newOrder() })).id,
        'finished',
      );
    }
    await harness.service.pause(
      await harness.service.start(HousekeepingDelayedWorkflow, { hero: await h.newOrder() }),
    );
    await harness.service.start(HousekeepingDelayedWorkflow, { hero: await h.newOrder() });
    const parked: WorkflowEntity[] = [];
    for (let i = 0; i < 2; i++) {
      const workflow = await harness.service.start(HousekeepingSignalWorkflow, {
        hero: await h.newOrder(),
      });
      await harness.waitForWorkflow(
        workflow.id,
        async (w) => (await h.current(w.id))?.state === 'waiting',
      );
      parked.push(workflow);
    }
    await h.executions().update((await h.current(parked[0].id)).id, { waitingSince: ago(8 * DAY) });

    await h.housekeeping().run();

    expect(Object.fromEntries(gauges)).toMatchObject({
      'geneva_drive.finished': 3,
      'geneva_drive.ready': 3,
      'geneva_drive.paused': 1,
      'geneva_drive.performing': 0,
      'geneva_drive.canceled': 0,
      'geneva_drive.finished{HousekeepingQuickWorkflow}': 3,
      'geneva_drive.paused{HousekeepingQuickWorkflow}': 0,
      'geneva_drive.paused{HousekeepingDelayedWorkflow}': 1,
      'geneva_drive.ready{HousekeepingDelayedWorkflow}': 1,
      'geneva_drive.ready{HousekeepingSignalWorkflow}': 2,
      'geneva_drive.ready{HousekeepingResumableWorkflow}': 0,
      'geneva_drive.paused_ratio{HousekeepingDelayedWorkflow}': 0.5,
      'geneva_drive.paused_ratio{HousekeepingQuickWorkflow}': 0,
      'geneva_drive.paused_ratio{HousekeepingSignalWorkflow}': 0,
      'geneva_drive.waiting_step_executions': 2,
      'geneva_drive.waiting_step_executions{HousekeepingSignalWorkflow}': 2,
      'geneva_drive.waiting_step_executions{HousekeepingQuickWorkflow}': 0,
      'geneva_drive.waiting_overdue': 1,
      'geneva_drive.waiting_overdue{HousekeepingSignalWorkflow}': 1,
      'geneva_drive.waiting_overdue{HousekeepingDelayedWorkflow}': 0,
    });

    // Values follow the data: resuming the paused one brings its gauges back to 0.
    const [paused] = await harness.service.list({ state: 'paused' });
    await harness.service.resume(paused);
    await h.housekeeping().run();
    expect(gauges.get('geneva_drive.paused')).toBe(0);
    expect(gauges.get('geneva_drive.paused_ratio{HousekeepingDelayedWorkflow}')).toBe(0);
  });
});

// Its stuck row is a lost job: not on the local transport.
describeIf(testTransport !== 'local')(
  'housekeeping before the resumable and signals migrations ran (PostgreSQL + BullMQ)',
  () => {
    let harness: EngineHarness;
    const gauges = new Map<string, number>();
    const h = helpers(() => harness);

    beforeAll(async () => {
      harness = await EngineHarness.boot({
        workflows: HOUSEKEEPING_WORKFLOWS,
        providers: [StepScript, IterationScript],
        entities: [Order],
        migrations: GENEVA_DRIVE_MIGRATIONS.slice(0, 1),
        options: {
          housekeeping: { enabled: false },
          metrics: {
            gauge: (name, value, tags) =>
              gauges.set(tags ? `${name}{${tags.workflow}}` : name, value),
          },
        },
      });
    });

    afterAll(() => harness?.close());

    it('cleans up, recovers and reports the workflow gauges; the waiting gauges are skipped', async () => {
      const done = await harness.waitForState(
        (await harness.service.start(HousekeepingQuickWorkflow, { hero: await h.newOrder() })).id,
        'finished',
      );
      await h.workflows().update(done.id, { transitionedAt: ago(40 * DAY) });
      const stuck = await h.stuckScheduled();

      expect(await h.housekeeping().run()).toEqual({
        ...ZERO,
        workflowsCleanedUp: 1,
        stepExecutionsCleanedUp: 1,
        stuckScheduledRecovered: 1,
      });
      await harness.waitForState(stuck.workflow.id, 'finished');
      // Read after the cleanup: the deleted workflow no longer counts.
      expect(gauges.get('geneva_drive.finished{HousekeepingQuickWorkflow}')).toBe(0);
      expect(gauges.get('geneva_drive.paused_ratio{HousekeepingDelayedWorkflow}')).toBe(0);
      expect([...gauges.keys()].filter((name) => name.includes('waiting'))).toEqual([]);
    });
  },
);

describe('housekeeping schedule (@nestjs/schedule)', () => {
  let schema: string;
  const redis = openTestRedis();

  beforeAll(async () => {
    schema = await createSchema('gd_schedule');
  });

  afterAll(async () => {
    await redis.release();
    await dropSchema(schema);
  });

  async function compile(imports: unknown[], housekeeping: object, metrics?: GaugeReporter) {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ...(imports as never[]),
        TypeOrmModule.forRoot({ ...dataSourceOptions(schema, [Order]), retryAttempts: 0 }),
        GenevaDriveModule.forRoot({
          connection: redis.connection,
          prefix: testPrefix('gd-schedule'),
          worker: false,
          housekeeping,
          metrics,
        }),
      ],
    }).compile();
    return moduleRef.createNestApplication({ logger: false });
  }

  it('registers the cron job from housekeeping.cron at bootstrap, runs it, and removes it at shutdown', async () => {
    const ticked = new Deferred();
    const app: INestApplication = await compile(
      [ScheduleModule.forRoot()],
      { cron: '* * * * * *' },
      {
        gauge: () => ticked.resolve(),
      },
    );
    let registry: SchedulerRegistry;
    try {
      await app.init();
      registry = app.get(SchedulerRegistry);
      const job = registry.getCronJob(HOUSEKEEPING_CRON_JOB_NAME);
      expect(job.isActive).toBe(true);
      expect(job.cronTime.source).toBe('* * * * * *');
      await ticked.promise;
    } finally {
      await app.close();
    }
    expect(registry.doesExist('cron', HOUSEKEEPING_CRON_JOB_NAME)).toBe(false);
  });

  it('enabled housekeeping without a SchedulerRegistry fails boot with ModuleOptionsError', async () => {
    const app = await compile([], {});
    try {
      const error = (await app.init().then(
        () => null,
        (thrown: unknown) => thrown,
      )) as Error;
      expect(error).toBeInstanceOf(ModuleOptionsError);
      expect(error.message).toMatch(/no SchedulerRegistry.*ScheduleModule\.forRoot\(\)/);
    } finally {
      await app.close();
    }
  });

  it('an invalid cron expression fails boot with ModuleOptionsError', async () => {
    const app = await compile([ScheduleModule.forRoot()], { cron: 'every tuesday' });
    try {
      await expect(app.init()).rejects.toThrow(
        /housekeeping\.cron 'every tuesday' is not a valid cron expression/,
      );
    } finally {
      await app.close();
    }
  });

  it('enabled: false registers nothing, and run() still works', async () => {
    const app = await compile([ScheduleModule.forRoot()], { enabled: false });
    try {
      await app.init();
      expect(app.get(SchedulerRegistry).doesExist('cron', HOUSEKEEPING_CRON_JOB_NAME)).toBe(false);
      expect(await app.get(HousekeepingService).run()).toEqual(ZERO);
    } finally {
      await app.close();
    }
  });
});

describe('HousekeepingService in GenevaDriveTestingModule (SQLite)', () => {
  let app: INestApplication;
  const gauges = new Map<string, number>();

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'better-sqlite3',
          database: ':memory:',
          entities: [...GENEVA_DRIVE_ENTITIES, Order],
          migrations: GENEVA_DRIVE_MIGRATIONS,
          migrationsRun: true,
          synchronize: true,
        }),
        GenevaDriveTestingModule.forRoot({
          waitingVisibilityThreshold: null,
          metrics: {
            gauge: (name, value, tags) =>
              gauges.set(tags ? `${name}{${tags.workflow}}` : name, value),
          },
        }),
      ],
      providers: [...HOUSEKEEPING_WORKFLOWS, StepScript, IterationScript],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(() => app?.close());

  it('run() cleans up, recovers and reports gauges with housekeeping timers off', async () => {
    const service = app.get(HousekeepingService);
    const helper = app.get(WorkflowTestHelper);
    const workflows = app.get(WorkflowService);
    const dataSource = app.get(DataSource);
    const orders = dataSource.getRepository(Order);

    const done = await helper.speedrunWorkflow(
      await workflows.start(HousekeepingQuickWorkflow, {
        hero: await orders.save({ status: 'new' }),
      }),
    );
    await dataSource
      .getRepository(WorkflowEntity)
      .update(done.id, { transitionedAt: ago(40 * DAY) });
    const delayed = await workflows.start(HousekeepingDelayedWorkflow, {
      hero: await orders.save({ status: 'new' }),
    });
    const scheduled = (await workflows.currentExecution(delayed))!;
    await dataSource
      .getRepository(StepExecutionEntity)
      .update(scheduled.id, { scheduledFor: ago(HOUR) });
    const parked = await workflows.start(HousekeepingSignalWorkflow, {
      hero: await orders.save({ status: 'new' }),
    });
    await helper.performNextStep(parked);

    const result = await service.run();
    expect(result).toEqual({
      ...ZERO,
      workflowsCleanedUp: 1,
      stepExecutionsCleanedUp: 1,
      stuckScheduledRecovered: 1,
    });
    expect(helper.enqueuedJobs().map((job) => job.jobId)).toContain(`${scheduled.id}_1`);
    expect(gauges.get('geneva_drive.ready')).toBe(2);
    expect(gauges.get('geneva_drive.waiting_step_executions{HousekeepingSignalWorkflow}')).toBe(1);
    // waitingVisibilityThreshold: null turns the overdue gauge off.
    expect([...gauges.keys()].some((name) => name.startsWith('geneva_drive.waiting_overdue'))).toBe(
      false,
    );
  });
});
