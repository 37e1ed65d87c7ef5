import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  GENEVA_DRIVE_ENTITIES,
  GENEVA_DRIVE_MIGRATIONS,
  HousekeepingService,
  StepExecutionEntity,
  WorkflowService,
  type GaugeReporter,
  type StepExecutionEntity as StepExecution,
} from 'nestjs-geneva-drive';
import { GenevaDriveTestingModule } from 'nestjs-geneva-drive/testing';
import {
  HOUSEKEEPING_WORKFLOWS,
  HousekeepingDelayedWorkflow,
  HousekeepingQuickWorkflow,
} from '../fixtures/housekeeping.workflows';
import { Order } from '../fixtures/order.entity';
import { StepJobQueue } from '../../lib/queue/step-job.queue';
import type { StepJobInspector } from '../../lib/queue/step-job-inspector';
import { IterationScript } from '../fixtures/resumable.workflows';
import { StepScript } from '../fixtures/step-script';
import { testDatabase, testDatabaseLabel } from './support/database';
import { describeIf, itIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { testTransport } from './support/transport';

const MINUTE = 60_000;
const ago = (ms: number) => new Date(Date.now() - ms);

/**
 * Reconciliation of `scheduled` executions with BullMQ (housekeeping.reconcileScheduledJobs):
 * an execution whose latest job the queue no longer holds, or holds as already finished, is
 * re-enqueued under the next job id at the next housekeeping run (or on demand), long before
 * `stuckScheduledThreshold`. The apps here consume nothing (`worker: false`), so jobs stay in the
 * queue where the tests can look at them, except where a test boots a worker. Not on the local
 * transport: it refuses `worker: false` (it would run nothing), and its jobs live in its process,
 * lost only with it (local-transport.spec reads them back at the next boot).
 */
describeIf(testTransport !== 'local')(
  `scheduled-job reconciliation (${testDatabaseLabel} + BullMQ)`,
  () => {
    let harness: EngineHarness;
    const gauges = new Map<string, number>();
    const metrics: GaugeReporter = { gauge: (name, value) => gauges.set(name, value) };

    const executions = () => harness.dataSource.getRepository(StepExecutionEntity);
    const housekeeping = () => harness.get(HousekeepingService);
    const newOrder = () => harness.dataSource.getRepository(Order).save({ status: 'new' });
    const current = async (workflowId: string) =>
      (await harness.service.currentExecution(workflowId))!;
    /** Makes the row look settled (older than the reconciliation grace period). */
    const settle = (execution: StepExecution) =>
      executions().update(execution.id, { updatedAt: ago(MINUTE) });

    /** A started workflow whose first job the queue lost (as a Redis flush would). */
    async function lostJob(workflow = HousekeepingDelayedWorkflow) {
      const started = await harness.service.start(workflow, { hero: await newOrder() });
      const execution = await current(started.id);
      expect(await harness.queue().remove(execution.jobId!)).toBe(1);
      await settle(execution);
      return { workflow: started, execution };
    }

    beforeAll(async () => {
      harness = await EngineHarness.boot({
        workflows: HOUSEKEEPING_WORKFLOWS,
        providers: [StepScript, IterationScript],
        entities: [Order],
        options: { worker: false, housekeeping: { enabled: false }, metrics },
      });
    });

    afterAll(() => harness?.close());

    it('re-enqueues a lost job under the next job id, keeping scheduled_for (a delayed step stays delayed)', async () => {
      const { execution } = await lostJob();
      expect(await housekeeping().reconcileScheduledJobs()).toBe(1);
      const after = await executions().findOneByOrFail({ id: execution.id });
      expect(after).toMatchObject({ state: 'scheduled', jobId: `${execution.id}_1` });
      expect(after.scheduledFor).toEqual(execution.scheduledFor);
      const job = (await harness.queue().getJob(`${execution.id}_1`))!;
      expect(job.data).toMatchObject({ stepExecutionId: execution.id });
      expect(await job.getState()).toBe('delayed');
      // The delay runs to the original due time, an hour away.
      expect(job.delay).toBeGreaterThan(55 * MINUTE);
      // A second pass finds the new job and leaves the row alone.
      expect(await housekeeping().reconcileScheduledJobs()).toBe(0);
      expect((await executions().findOneByOrFail({ id: execution.id })).jobId).toBe(
        `${execution.id}_1`,
      );
    });

    it('leaves alone rows whose job is waiting, rows younger than the grace period, and paused workflows', async () => {
      const healthy = await harness.service.start(HousekeepingQuickWorkflow, {
        hero: await newOrder(),
      });
      const healthyExecution = await current(healthy.id);
      await settle(healthyExecution);
      expect(await harness.queue().getJobState(healthyExecution.jobId!)).toBe('waiting');

      const fresh = await harness.service.start(HousekeepingDelayedWorkflow, {
        hero: await newOrder(),
      });
      const freshExecution = await current(fresh.id);
      await harness.queue().remove(freshExecution.jobId!);

      const paused = await lostJob();
      await harness.service.pause(paused.workflow);
      await settle(paused.execution);

      expect(await housekeeping().reconcileScheduledJobs()).toBe(0);
      for (const execution of [healthyExecution, freshExecution, paused.execution]) {
        expect((await executions().findOneByOrFail({ id: execution.id })).jobId).toBe(execution.id);
      }
      // Once settled, the fresh row's lost job is found.
      await settle(freshExecution);
      expect(await housekeeping().reconcileScheduledJobs()).toBe(1);
      expect((await executions().findOneByOrFail({ id: freshExecution.id })).jobId).toBe(
        `${freshExecution.id}_1`,
      );
      for (const workflow of [healthy, fresh, paused.workflow])
        await harness.service.cancel(workflow);
    });

    it('run() reconciles before stuck-scheduled recovery, which leaves the re-enqueued row alone; the gauge counts it', async () => {
      // Lost and overdue by 20 minutes: both passes would pick it; it must be re-enqueued once.
      const { workflow, execution } = await lostJob();
      await executions().update(execution.id, { scheduledFor: ago(20 * MINUTE) });
      const result = await housekeeping().run();
      expect(result.stuckScheduledRecovered).toBe(0);
      expect((await executions().findOneByOrFail({ id: execution.id })).jobId).toBe(
        `${execution.id}_1`,
      );
      expect(await harness.queue().getJobState(`${execution.id}_1`)).toBe('waiting');
      expect(gauges.get('geneva_drive.reenqueued_lost_jobs')).toBe(1);
      await housekeeping().run();
      expect(gauges.get('geneva_drive.reenqueued_lost_jobs')).toBe(0);
      await harness.service.cancel(workflow);
    });

    /** Every job of the queue, in any state (the apps here consume none). */
    const jobCount = async () =>
      Object.values(
        await harness
          .queue()
          .getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed'),
      ).reduce((sum, count) => sum + count, 0);

    it('a backlog past stuckScheduledThreshold whose jobs are still queued: run() adds no job and recovers nothing', async () => {
      const backlog = [];
      for (let i = 0; i < 3; i++) {
        const workflow = await harness.service.start(HousekeepingQuickWorkflow, {
          hero: await newOrder(),
        });
        const execution = await current(workflow.id);
        // Due 20 minutes ago and left alone since: a queue that is behind, not a lost job.
        await executions().update(execution.id, { scheduledFor: ago(20 * MINUTE) });
        await settle(execution);
        backlog.push({ workflow, execution });
      }
      const jobsBefore = await jobCount();
      for (let run = 0; run < 2; run++) {
        expect(await housekeeping().run()).toMatchObject({ stuckScheduledRecovered: 0 });
        expect(await jobCount()).toBe(jobsBefore);
      }
      for (const { workflow, execution } of backlog) {
        expect((await executions().findOneByOrFail({ id: execution.id })).jobId).toBe(execution.id);
        await harness.service.cancel(workflow);
      }
    });

    it('one run asks the queue about each overdue row once: recovery reuses what reconciliation looked up', async () => {
      const overdue = [];
      for (let i = 0; i < 3; i++) {
        const workflow = await harness.service.start(HousekeepingQuickWorkflow, {
          hero: await newOrder(),
        });
        overdue.push({ workflow, execution: await current(workflow.id) });
      }
      overdue.push(await lostJob());
      for (const { execution } of overdue) {
        await executions().update(execution.id, { scheduledFor: ago(20 * MINUTE) });
        await settle(execution);
      }
      const queue = harness.app.get<StepJobQueue>(StepJobQueue) as StepJobQueue & StepJobInspector;
      const lookups = jest.spyOn(queue, 'jobPresence');
      let asked: string[];
      try {
        await housekeeping().run();
        asked = lookups.mock.calls.flatMap(([, jobIds]) => jobIds);
      } finally {
        lookups.mockRestore();
      }
      for (const { execution } of overdue) {
        expect(asked.filter((jobId) => jobId === execution.jobId)).toHaveLength(1);
      }
      // The lost one was re-enqueued once; the queued ones kept their jobs.
      expect((await executions().findOneByOrFail({ id: overdue[3].execution.id })).jobId).toBe(
        `${overdue[3].execution.id}_1`,
      );
      for (const { workflow } of overdue) await harness.service.cancel(workflow);
    });

    it('a lost job past stuckScheduledThreshold is re-enqueued once, and not again by the next runs', async () => {
      const { workflow, execution } = await lostJob();
      await executions().update(execution.id, { scheduledFor: ago(20 * MINUTE) });
      await settle(execution);
      const jobsBefore = await jobCount();
      await housekeeping().run();
      expect(await jobCount()).toBe(jobsBefore + 1);
      for (let run = 0; run < 2; run++) {
        await housekeeping().run();
        expect(await jobCount()).toBe(jobsBefore + 1);
        expect((await executions().findOneByOrFail({ id: execution.id })).jobId).toBe(
          `${execution.id}_1`,
        );
      }
      await harness.service.cancel(workflow);
    });

    it('concurrent reconciliations in two processes re-enqueue each lost job once (raced, several rounds)', async () => {
      const other = await EngineHarness.boot({
        workflows: HOUSEKEEPING_WORKFLOWS,
        providers: [StepScript, IterationScript],
        entities: [Order],
        reuse: { schema: harness.schema, prefix: harness.prefix },
        options: { worker: false, housekeeping: { enabled: false } },
      });
      try {
        for (let round = 0; round < 5; round++) {
          const rows = [await lostJob(), await lostJob(), await lostJob()];
          const counts = await Promise.all([
            housekeeping().reconcileScheduledJobs(),
            other.get(HousekeepingService).reconcileScheduledJobs(),
            housekeeping().reconcileScheduledJobs(),
            other.get(HousekeepingService).reconcileScheduledJobs(),
          ]);
          expect(counts.reduce((a, b) => a + b, 0)).toBe(3);
          for (const row of rows) {
            expect((await executions().findOneByOrFail({ id: row.execution.id })).jobId).toBe(
              `${row.execution.id}_1`,
            );
            await harness.service.cancel(row.workflow);
          }
        }
      } finally {
        await other.closeApp();
      }
    });

    // Not on SQLite: there this app boots, runs and closes within ~50 ms, and closing it that soon
    // after another app in the same process races a BullMQ connection still initializing (an
    // unhandled "Connection is closed"). Known teardown issue, noted in CHANGELOG; the behavior under
    // test does not depend on the database.
    itIf(testDatabase !== 'sqlite')(
      'with reconcileScheduledJobs: false, run() leaves a lost job that is not yet overdue alone',
      async () => {
        const off = await EngineHarness.boot({
          workflows: HOUSEKEEPING_WORKFLOWS,
          providers: [StepScript, IterationScript],
          entities: [Order],
          reuse: { schema: harness.schema, prefix: harness.prefix },
          options: {
            worker: false,
            housekeeping: { enabled: false, reconcileScheduledJobs: false },
          },
        });
        try {
          const { workflow, execution } = await lostJob();
          expect(await off.get(HousekeepingService).run()).toMatchObject({
            stuckScheduledRecovered: 0,
          });
          expect((await executions().findOneByOrFail({ id: execution.id })).jobId).toBe(
            execution.id,
          );
          await harness.service.cancel(workflow);
        } finally {
          await off.closeApp();
        }
      },
    );

    // PostgreSQL only. On MariaDB the runner's locking read of the uncommitted workflow row waits
    // for the caller's commit, and on SQLite (one connection) the runner sees the uncommitted row:
    // there, a job cannot run before its row is visible.
    itIf(testDatabase === 'postgres')(
      'a job that ran before its row was visible (and so did nothing) is re-enqueued, and the step runs',
      async () => {
        // Inline enqueue inside a caller transaction that commits after the runner's 500 ms lookup.
        const worker = await EngineHarness.boot({
          workflows: HOUSEKEEPING_WORKFLOWS,
          providers: [StepScript, IterationScript],
          entities: [Order],
          reuse: { schema: harness.schema, prefix: harness.prefix },
          options: { enqueueAfterCommit: false, housekeeping: { enabled: false } },
        });
        try {
          const hero = await newOrder();
          const workflow = await worker.dataSource.transaction(async (manager) => {
            const started = await worker.service.start(HousekeepingQuickWorkflow, {
              hero,
              manager,
            });
            const jobId = (
              await manager.findOneByOrFail(StepExecutionEntity, { workflowId: started.id })
            ).jobId!;
            // Wait until the job has run and given up on the invisible row.
            for (let i = 0; (await worker.queue().getJobState(jobId)) !== 'completed'; i++) {
              if (i > 100) throw new Error(`job ${jobId} did not complete`);
              await new Promise((resolve) => setTimeout(resolve, 50));
            }
            return started;
          });
          const execution = await current(workflow.id);
          expect(execution.state).toBe('scheduled');
          await settle(execution);
          expect(await worker.get(HousekeepingService).reconcileScheduledJobs()).toBe(1);
          await worker.waitForState(workflow.id, 'finished');
          const history = await worker.history(workflow.id);
          expect(history.map((e) => `${e.state}/${e.outcome}:${e.jobId}`)).toEqual([
            `completed/success:${execution.id}_1`,
          ]);
        } finally {
          await worker.closeApp();
        }
      },
    );
  },
);

describe('scheduled-job reconciliation with the testing module', () => {
  let app: INestApplication;

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
        GenevaDriveTestingModule.forRoot(),
      ],
      providers: [...HOUSEKEEPING_WORKFLOWS, StepScript, IterationScript],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(() => app?.close());

  it('does nothing: the in-process queue never loses a job', async () => {
    const dataSource = app.get(DataSource);
    const workflow = await app.get(WorkflowService).start(HousekeepingDelayedWorkflow, {
      hero: await dataSource.getRepository(Order).save({ status: 'new' }),
    });
    const execution = (await app.get(WorkflowService).currentExecution(workflow))!;
    await dataSource
      .getRepository(StepExecutionEntity)
      .update(execution.id, { updatedAt: ago(MINUTE) });
    expect(await app.get(HousekeepingService).reconcileScheduledJobs()).toBe(0);
    expect((await app.get(HousekeepingService).run()).stuckScheduledRecovered).toBe(0);
    expect(
      (await dataSource.getRepository(StepExecutionEntity).findOneByOrFail({ id: execution.id }))
        .jobId,
    ).toBe(execution.id);
  });
  it('without a queue to inspect, an overdue row is recovered once per stuckScheduledThreshold, not at every run', async () => {
    const dataSource = app.get(DataSource);
    const service = app.get(WorkflowService);
    const workflow = await service.start(HousekeepingDelayedWorkflow, {
      hero: await dataSource.getRepository(Order).save({ status: 'new' }),
    });
    const execution = (await service.currentExecution(workflow))!;
    await dataSource
      .getRepository(StepExecutionEntity)
      .update(execution.id, { scheduledFor: ago(20 * MINUTE), updatedAt: ago(MINUTE) });
    expect((await app.get(HousekeepingService).run()).stuckScheduledRecovered).toBe(1);
    expect((await app.get(HousekeepingService).run()).stuckScheduledRecovered).toBe(0);
    const after = await dataSource
      .getRepository(StepExecutionEntity)
      .findOneByOrFail({ id: execution.id });
    expect(after.jobId).toBe(`${execution.id}_1`);
    expect(after.scheduledFor.getTime()).toBeGreaterThan(Date.now() - MINUTE);
    await service.cancel(workflow);
  });
});
