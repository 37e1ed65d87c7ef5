import type { INestApplication } from '@nestjs/common';
import { getQueueToken } from '@nestjs/bullmq';
import { Test } from '@nestjs/testing';
import { TypeOrmModule, getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { v7 as uuidv7 } from 'uuid';
import {
  GENEVA_DRIVE_ENTITIES,
  GENEVA_DRIVE_MIGRATIONS,
  ModuleOptionsError,
  SignalEntity,
  StepExecutionEntity,
  StepNotDefinedError,
  WorkflowNotFoundError,
  WorkflowRunner,
  WorkflowService,
  type WorkflowEntity,
} from 'nestjs-geneva-drive';
import {
  GenevaDriveTestingModule,
  WorkflowTestHelper,
  type EnqueuedJob,
  type GenevaDriveTestingModuleOptions,
} from 'nestjs-geneva-drive/testing';
import { GENEVA_DRIVE_RESOLVED_OPTIONS } from '../../lib/options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../../lib/options/resolved-options.interface';
import { StepJobQueue } from '../../lib/queue/step-job.queue';
import { InMemoryStepJobQueue } from '../../lib/testing/in-memory-step-job.queue';
import { StepJournal } from '../fixtures/step-journal';
import { Customer } from '../fixtures/testing-module.customer.entity';
import {
  DeadlineWorkflow,
  FlakyWorkflow,
  ForeverWorkflow,
  PaymentWorkflow,
  QuickWorkflow,
  SignupWorkflow,
  TESTING_MODULE_WORKFLOWS,
} from '../fixtures/testing-module.workflows';
import {
  createSchema,
  dataSourceOptions,
  dropSchema,
  testDatabase,
  type TestDatabase,
} from './support/database';

/**
 * `sqlite` is an in-memory database (what users' own workflow tests can use, no server); the
 * other is the e2e run's database (GENEVA_TEST_DB), left out when that is SQLite already.
 */
type Database = 'sqlite' | TestDatabase;
const DATABASES: Database[] = testDatabase === 'sqlite' ? ['sqlite'] : ['sqlite', testDatabase];

/** A test app the way users write one: their DataSource, the testing module, their workflows. */
class TestApp {
  private constructor(
    readonly app: INestApplication,
    private readonly schema: string | null,
  ) {}

  static async boot(
    database: Database,
    options?: GenevaDriveTestingModuleOptions,
  ): Promise<TestApp> {
    const schema = database === 'sqlite' ? null : await createSchema('gd_testing');
    const typeorm =
      schema === null
        ? TypeOrmModule.forRoot({
            type: 'better-sqlite3',
            database: ':memory:',
            entities: [...GENEVA_DRIVE_ENTITIES, Customer],
            migrations: GENEVA_DRIVE_MIGRATIONS,
            migrationsRun: true,
            synchronize: true,
          })
        : TypeOrmModule.forRoot(dataSourceOptions(schema, [Customer]));
    try {
      const moduleRef = await Test.createTestingModule({
        imports: [typeorm, GenevaDriveTestingModule.forRoot(options)],
        providers: [...TESTING_MODULE_WORKFLOWS, StepJournal],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      await app.init();
      return new TestApp(app, schema);
    } catch (error) {
      if (schema) await dropSchema(schema);
      throw error;
    }
  }

  get helper(): WorkflowTestHelper {
    return this.app.get(WorkflowTestHelper);
  }

  get service(): WorkflowService {
    return this.app.get(WorkflowService);
  }

  get journal(): StepJournal {
    return this.app.get(StepJournal);
  }

  get dataSource(): DataSource {
    return this.app.get<DataSource>(getDataSourceToken());
  }

  async customer(email = 'ada@example.com'): Promise<Customer> {
    return this.dataSource.getRepository(Customer).save({ email });
  }

  /** The jobs recorded for this workflow's executions, oldest first. */
  async jobsOf(workflow: WorkflowEntity): Promise<EnqueuedJob[]> {
    const ids = new Set((await this.service.executionHistory(workflow)).map((e) => e.id));
    return this.helper.enqueuedJobs().filter((job) => ids.has(job.stepExecutionId));
  }

  /** Polls the database until `check` holds (autoRun works in the background). */
  async waitUntil(
    check: () => Promise<boolean>,
    describe: string,
    timeoutMs = 10_000,
  ): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`Timed out waiting until ${describe}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async waitForState(id: string, state: WorkflowEntity['state']): Promise<void> {
    await this.waitUntil(
      async () => (await this.service.find(id))?.state === state,
      `${id} is ${state}`,
    );
  }

  async close(): Promise<void> {
    await this.app.close();
    if (this.schema) await dropSchema(this.schema);
  }
}

describe.each<Database>(DATABASES)('GenevaDriveTestingModule on %s', (database) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await TestApp.boot(database);
  });

  afterAll(() => t?.close());

  beforeEach(() => t.journal.entries.splice(0));

  it('speedrunWorkflow runs every step to finished, ignoring step waits', async () => {
    const workflow = await t.service.start(SignupWorkflow, {
      hero: await t.customer('ada@example.com'),
    });

    const finished = await t.helper.speedrunWorkflow(workflow);

    expect(finished.state).toBe('finished');
    expect(t.journal.entries).toEqual(['createAccount:ada@example.com', 'sendWelcome', 'activate']);
    const history = await t.service.executionHistory(workflow);
    expect(history.map((e) => [e.stepName, e.state, e.outcome])).toEqual([
      ['createAccount', 'completed', 'success'],
      ['sendWelcome', 'completed', 'success'],
      ['activate', 'completed', 'success'],
    ]);
    // The two-hour wait was recorded but not waited for.
    expect(history[1].scheduledFor.getTime()).toBeGreaterThan(Date.now() + 3_600_000);
    await t.helper.assertWorkflowState(workflow, 'finished');
    await t.helper.assertStepExecuted(workflow.id, 'sendWelcome');
  });

  it('performNextStep runs one step at a time while enqueuedJobs records each job and its delay', async () => {
    const workflow = await t.service.start(SignupWorkflow, { hero: await t.customer() });
    const [first] = await t.service.executionHistory(workflow);
    expect(await t.jobsOf(workflow)).toEqual([
      { jobId: first.id, stepExecutionId: first.id, queue: 'geneva-drive', delay: 0 },
    ]);
    // Without autoRun the queue only records: nothing ran.
    expect(t.journal.entries).toEqual([]);

    const ranFirst = await t.helper.performNextStep(workflow);
    expect([ranFirst?.id, ranFirst?.stepName, ranFirst?.state, ranFirst?.outcome]).toEqual([
      first.id,
      'createAccount',
      'completed',
      'success',
    ]);
    expect(t.journal.entries).toEqual(['createAccount:ada@example.com']);
    const jobs = await t.jobsOf(workflow);
    expect(jobs).toHaveLength(2);
    const second = (await t.service.currentExecution(workflow))!;
    expect(second.stepName).toBe('sendWelcome');
    expect(jobs[1]).toMatchObject({
      jobId: second.id,
      stepExecutionId: second.id,
      queue: 'geneva-drive',
    });
    expect(jobs[1].delay).toBeGreaterThan(2 * 3_600_000 - 60_000);
    expect(jobs[1].delay).toBeLessThanOrEqual(2 * 3_600_000);
    await t.helper.assertWorkflowState(workflow, 'ready');

    expect((await t.helper.performNextStep(workflow))?.stepName).toBe('sendWelcome');
    expect((await t.helper.performNextStep(workflow))?.stepName).toBe('activate');
    await t.helper.assertWorkflowState(workflow, 'finished');
    expect(await t.helper.performNextStep(workflow)).toBeNull();
    expect(t.journal.entries).toEqual(['createAccount:ada@example.com', 'sendWelcome', 'activate']);
  });

  it('startMany records one job per workflow (the in-process queue adds them in order) and speedrunWorkflow runs each', async () => {
    const heroes = [await t.customer('a@example.com'), await t.customer('b@example.com')];
    const created = await t.service.startMany(
      SignupWorkflow,
      heroes.map((hero) => ({ hero })),
    );
    expect(created.map((row) => row?.heroId)).toEqual(heroes.map((hero) => String(hero.id)));
    for (const workflow of created) {
      const [first] = await t.service.executionHistory(workflow!);
      expect(await t.jobsOf(workflow!)).toEqual([
        { jobId: first.id, stepExecutionId: first.id, queue: 'geneva-drive', delay: 0 },
      ]);
      expect((await t.helper.speedrunWorkflow(workflow!)).state).toBe('finished');
    }
    expect(t.journal.entries.filter((entry) => entry === 'activate')).toHaveLength(2);
  });

  it('records a re-enqueue under its new job id and ignores a job id it already holds', async () => {
    const workflow = await t.service.start(SignupWorkflow, { hero: await t.customer() });
    const [first] = await t.service.executionHistory(workflow);
    await t.service.pause(workflow);
    await t.service.resume(workflow);
    expect((await t.jobsOf(workflow)).map((job) => job.jobId)).toEqual([first.id, `${first.id}_1`]);

    const before = t.helper.enqueuedJobs().length;
    await t.app.get(StepJobQueue).add({
      jobId: first.id,
      stepExecutionId: first.id,
      workflowId: workflow.id,
      queue: 'geneva-drive',
      delay: 0,
    });
    expect(t.helper.enqueuedJobs()).toHaveLength(before);
  });

  it('performStepInline runs the named step, then by default nextStepName, each in a fresh execution', async () => {
    const workflow = await t.service.start(SignupWorkflow, { hero: await t.customer() });
    const [scheduled] = await t.service.executionHistory(workflow);

    const welcome = await t.helper.performStepInline(workflow, 'sendWelcome');
    expect([welcome.stepName, welcome.state, welcome.outcome]).toEqual([
      'sendWelcome',
      'completed',
      'success',
    ]);
    expect(welcome.id).not.toBe(scheduled.id);
    expect(t.journal.entries).toEqual(['sendWelcome']);
    const canceled = (await t.service.executionHistory(workflow)).find(
      (e) => e.id === scheduled.id,
    )!;
    expect([canceled.stepName, canceled.state]).toEqual(['createAccount', 'canceled']);

    // The same step can run again, each time in a new execution (the scheduled `activate` is
    // canceled and scheduled anew when it completes).
    const again = await t.helper.performStepInline(workflow, 'sendWelcome');
    expect([again.stepName, again.state]).toEqual(['sendWelcome', 'completed']);
    expect(again.id).not.toBe(welcome.id);
    expect(t.journal.entries).toEqual(['sendWelcome', 'sendWelcome']);

    const activate = await t.helper.performStepInline(workflow);
    expect([activate.stepName, activate.state]).toEqual(['activate', 'completed']);
    expect(t.journal.entries).toEqual(['sendWelcome', 'sendWelcome', 'activate']);
    await t.helper.assertWorkflowState(workflow, 'finished');
    const history = await t.service.executionHistory(workflow);
    expect(history.map((e) => [e.stepName, e.state])).toEqual([
      ['createAccount', 'canceled'],
      ['sendWelcome', 'completed'],
      ['activate', 'canceled'],
      ['sendWelcome', 'completed'],
      ['activate', 'canceled'],
      ['activate', 'completed'],
    ]);
  });

  it('performStepInline with an unknown step throws StepNotDefinedError listing the available steps', async () => {
    const workflow = await t.service.start(SignupWorkflow, { hero: await t.customer() });
    const attempt = t.helper.performStepInline(workflow, 'sendGoodbye');
    await expect(attempt).rejects.toThrow(StepNotDefinedError);
    await expect(attempt).rejects.toThrow(
      "Step 'sendGoodbye' is not defined in SignupWorkflow. Available steps: createAccount, sendWelcome, activate.",
    );
    expect(t.journal.entries).toEqual([]);
  });

  it('a step that throws pauses the workflow and its error propagates out of the helper', async () => {
    const workflow = await t.service.start(FlakyWorkflow, { hero: await t.customer() });

    await expect(t.helper.speedrunWorkflow(workflow)).rejects.toThrow(
      'boom: the payment provider is down',
    );

    await t.helper.assertWorkflowState(workflow, 'paused');
    await t.helper.assertStepExecuted(workflow, 'prepare');
    await t.helper.assertStepExecuted(workflow, 'explode', { state: 'failed' });
    const failed = (await t.service.executionHistory(workflow)).at(-1)!;
    expect([failed.outcome, failed.errorMessage]).toEqual([
      'failed',
      'boom: the payment provider is down',
    ]);
    // A paused workflow stops the speedrun without running anything.
    await expect(t.helper.speedrunWorkflow(workflow)).resolves.toMatchObject({ state: 'paused' });
    expect(t.journal.entries).toEqual(['prepare', 'explode']);
  });

  it('speedrunWorkflow gives up after maxSteps executions of a workflow that reattempts forever', async () => {
    const workflow = await t.service.start(ForeverWorkflow, { hero: await t.customer() });

    await expect(t.helper.speedrunWorkflow(workflow, { maxSteps: 5 })).rejects.toThrow(
      /speedrunWorkflow exceeded maxSteps \(5\).*'poll'/,
    );

    expect(t.journal.entries).toEqual(['poll', 'poll', 'poll', 'poll', 'poll']);
    const history = await t.service.executionHistory(workflow);
    expect(history.map((e) => e.state)).toEqual([
      'completed',
      'completed',
      'completed',
      'completed',
      'completed',
      'scheduled',
    ]);
    expect(history.slice(0, 5).every((e) => e.outcome === 'reattempted')).toBe(true);
  });

  it('speedrunCurrentStep runs only the current step (a plain step is a chain of one)', async () => {
    const workflow = await t.service.start(SignupWorkflow, { hero: await t.customer() });

    const ran = await t.helper.speedrunCurrentStep(workflow);

    expect([ran?.stepName, ran?.state]).toEqual(['createAccount', 'completed']);
    expect(t.journal.entries).toEqual(['createAccount:ada@example.com']);
    expect((await t.service.currentExecution(workflow))?.stepName).toBe('sendWelcome');
    await t.helper.assertWorkflowState(workflow, 'ready');

    // A reattempt is a new execution, not a successor: the chain still ends after one run.
    const forever = await t.service.start(ForeverWorkflow, { hero: await t.customer() });
    const polled = await t.helper.speedrunCurrentStep(forever);
    expect(polled?.outcome).toBe('reattempted');
    expect(t.journal.entries.filter((entry) => entry === 'poll')).toHaveLength(1);

    await t.helper.speedrunWorkflow(workflow);
    expect(await t.helper.speedrunCurrentStep(workflow)).toBeNull();
  });

  it('runIterations refuses a workflow without a current execution and a plain step', async () => {
    const workflow = await t.service.start(SignupWorkflow, { hero: await t.customer() });
    await expect(t.helper.runIterations(workflow, { count: 2 })).rejects.toThrow(
      /runIterations needs a @ResumableStep.*'createAccount'/,
    );
    expect(t.journal.entries).toEqual([]);

    await t.helper.speedrunWorkflow(workflow);
    await expect(t.helper.runIterations(workflow, { count: 2 })).rejects.toThrow(
      'No current step execution',
    );
  });

  it('a parked execution makes the helpers throw naming the awaited signal', async () => {
    const workflow = await t.service.start(PaymentWorkflow, { hero: await t.customer() });
    const [capture] = await t.service.executionHistory(workflow);
    // Park it the way the runner does for a `waitFor` step.
    await t.dataSource
      .getRepository(StepExecutionEntity)
      .update({ id: capture.id }, { state: 'waiting', waitingSince: new Date() });

    await expect(t.helper.speedrunWorkflow(workflow)).rejects.toThrow(
      /parked.*'capture'.*payment_confirmed/,
    );
    await expect(t.helper.performNextStep(workflow)).rejects.toThrow(/parked.*payment_confirmed/);
    await t.helper.assertWaitingForSignal(workflow);
    await t.helper.assertWaitingForSignal(workflow, 'payment_confirmed');
    await expect(t.helper.assertWaitingForSignal(workflow, 'refund_issued')).rejects.toThrow(
      /waiting for signal 'refund_issued'.*waits for signal 'payment_confirmed'/,
    );
    await expect(t.helper.assertWorkflowState(workflow, 'ready')).resolves.toBeUndefined();
  });

  it("expireWait fires a parked step's timeout now; the body does not run", async () => {
    const workflow = await t.service.start(DeadlineWorkflow, { hero: await t.customer() });
    const parked = await t.helper.performNextStep(workflow);
    expect(parked).toMatchObject({ stepName: 'capture', state: 'waiting' });
    expect(parked!.waitDeadlineAt!.getTime() - parked!.waitingSince!.getTime()).toBe(
      3 * 86_400_000,
    );
    // The timer is not a step job: enqueuedJobs() lists the step jobs only.
    expect((await t.jobsOf(workflow)).map((job) => job.stepExecutionId)).toEqual([parked!.id]);

    const expired = await t.helper.expireWait(workflow);
    expect(expired).toMatchObject({ id: parked!.id, state: 'skipped', outcome: 'skipped' });
    await expect(t.helper.expireWait(workflow)).rejects.toThrow(
      /Cannot expireWait .*step 'ship'\) is 'scheduled', not waiting/,
    );
    await t.helper.speedrunWorkflow(workflow);
    await t.helper.assertWorkflowState(workflow, 'finished');
    expect(t.journal.entries).toEqual(['ship']);
  });

  it('expireWait refuses a wait without a timeout, and a paused workflow', async () => {
    const unbounded = await t.service.start(PaymentWorkflow, { hero: await t.customer() });
    await t.helper.performNextStep(unbounded);
    await expect(t.helper.expireWait(unbounded)).rejects.toThrow(/step 'capture' has no timeout/);

    const paused = await t.service.start(DeadlineWorkflow, {
      hero: await t.customer('grace@example.com'),
    });
    await t.helper.performNextStep(paused);
    await t.service.pause(paused);
    await expect(t.helper.expireWait(paused)).rejects.toThrow(
      /the workflow is paused; resume it first/,
    );
  });

  it('assertions fail with the expected and the actual value', async () => {
    const workflow = await t.service.start(SignupWorkflow, { hero: await t.customer() });

    await expect(t.helper.assertWorkflowState(workflow, 'finished')).rejects.toThrow(
      `Expected workflow SignupWorkflow ${workflow.id} to be 'finished', but it is 'ready'.`,
    );
    await expect(t.helper.assertStepExecuted(workflow, 'createAccount')).rejects.toThrow(
      /step 'createAccount'.*in state 'completed'.*executions are: 'scheduled'/,
    );
    await expect(
      t.helper.assertStepExecuted(workflow, 'activate', { state: 'failed' }),
    ).rejects.toThrow(/step 'activate'.*'failed'.*executions are: none/);
    await expect(t.helper.assertWaitingForSignal(workflow, 'payment_confirmed')).rejects.toThrow(
      /waiting for signal 'payment_confirmed'.*step 'createAccount'\) is 'scheduled'/,
    );
    await t.helper.assertCursor(workflow, null);
    await expect(t.helper.assertCursor(workflow, { page: 2 })).rejects.toThrow(
      "Expected cursor { page: 2 }, got null (step 'createAccount'",
    );
    await expect(
      t.helper.assertSignalState(workflow, 'payment_confirmed', 'consumed'),
    ).rejects.toThrow(/'payment_confirmed'.*to be 'consumed'.*no signal of that name/);
    await expect(t.helper.assertStepHasSuccessor(workflow, 'createAccount')).rejects.toThrow(
      /step 'createAccount'.*none of its executions is completed/,
    );

    await t.helper.performNextStep(workflow);
    await t.helper.assertStepExecuted(workflow, 'createAccount');
    await expect(t.helper.assertStepHasSuccessor(workflow, 'createAccount')).rejects.toThrow(
      /step 'createAccount'.*outcome 'success'\) has no successor/,
    );
    await t.helper.speedrunWorkflow(workflow);
    await expect(t.helper.assertCursor(workflow, null)).rejects.toThrow(
      'Expected cursor null, got no current step execution',
    );
  });

  it('assertSignalState checks the most recent signal of that name', async () => {
    const workflow = await t.service.start(PaymentWorkflow, { hero: await t.customer() });
    const signal = (name: string, state: SignalEntity['state'], at: number) => ({
      id: uuidv7(),
      workflowId: workflow.id,
      name,
      idempotencyKey: null,
      state,
      claimedAt: null,
      consumedAt: null,
      claimed: 0,
      consumed: 0,
      createdAt: new Date(at),
      updatedAt: new Date(at),
    });
    const now = Date.now();
    const repository = t.dataSource.getRepository(SignalEntity);
    await repository.insert(signal('payment_confirmed', 'consumed', now - 2000));
    await repository.insert(signal('payment_confirmed', 'pending', now - 1000));
    await repository.insert(signal('refund_issued', 'claimed', now));

    await t.helper.assertSignalState(workflow, 'payment_confirmed', 'pending');
    await t.helper.assertSignalState(workflow, 'refund_issued', 'claimed');
    await expect(
      t.helper.assertSignalState(workflow, 'payment_confirmed', 'consumed'),
    ).rejects.toThrow(
      /'payment_confirmed'.*to be 'consumed', but the most recent one .* is 'pending'/,
    );
  });

  it('helpers reject an unknown workflow with WorkflowNotFoundError', async () => {
    const unknown = uuidv7();
    await expect(t.helper.speedrunWorkflow(unknown)).rejects.toThrow(WorkflowNotFoundError);
    await expect(t.helper.performNextStep(unknown)).rejects.toThrow(WorkflowNotFoundError);
    await expect(t.helper.performStepInline(unknown, 'createAccount')).rejects.toThrow(
      WorkflowNotFoundError,
    );
    await expect(t.helper.assertWorkflowState(unknown, 'ready')).rejects.toThrow(
      WorkflowNotFoundError,
    );
    await expect(t.helper.assertCursor('not-a-uuid', null)).rejects.toThrow(WorkflowNotFoundError);
  });
});

describe.each<Database>(DATABASES)('GenevaDriveTestingModule with autoRun on %s', (database) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await TestApp.boot(database, { autoRun: true });
  });

  afterAll(() => t?.close());

  it('runs a workflow to finished in the background, honoring step waits', async () => {
    const workflow = await t.service.start(QuickWorkflow, { hero: await t.customer() });

    await t.waitForState(workflow.id, 'finished');

    expect(t.journal.entries).toEqual(['one', 'two', 'three']);
    const [one, two] = await t.service.executionHistory(workflow);
    expect(two.startedAt!.getTime()).toBeGreaterThanOrEqual(two.scheduledFor.getTime());
    expect(two.startedAt!.getTime() - one.finishedAt!.getTime()).toBeGreaterThanOrEqual(50);
  });

  it('a failing step pauses the workflow; the background run swallows the error like a worker', async () => {
    const workflow = await t.service.start(FlakyWorkflow, { hero: await t.customer() });

    await t.waitForState(workflow.id, 'paused');

    const failed = (await t.service.executionHistory(workflow)).at(-1)!;
    expect([failed.stepName, failed.state, failed.errorMessage]).toEqual([
      'explode',
      'failed',
      'boom: the payment provider is down',
    ]);
  });

  it('leaves a delayed job on its timer and clears the timer when the app closes', async () => {
    const own = await TestApp.boot(database, { autoRun: true });
    const queue = own.app.get(InMemoryStepJobQueue);
    try {
      const workflow = await own.service.start(SignupWorkflow, { hero: await own.customer() });
      await own.waitUntil(
        async () => (await own.service.currentExecution(workflow))?.stepName === 'sendWelcome',
        'sendWelcome is scheduled',
      );
      await own.helper.assertStepExecuted(workflow, 'createAccount');
      expect(queue.scheduledCount).toBe(1);
    } finally {
      await own.close();
    }
    expect(queue.scheduledCount).toBe(0);
  });
});

describe('GenevaDriveTestingModule options and wiring', () => {
  const boot = (options: unknown) =>
    Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'better-sqlite3',
          database: ':memory:',
          entities: [...GENEVA_DRIVE_ENTITIES],
          migrations: GENEVA_DRIVE_MIGRATIONS,
          migrationsRun: true,
        }),
        GenevaDriveTestingModule.forRoot(options as GenevaDriveTestingModuleOptions),
      ],
    }).compile();

  it('refuses the Redis and worker options, naming each', async () => {
    const attempt = boot({ connection: { host: 'redis' }, prefix: 'x', queues: {}, worker: true });
    await expect(attempt).rejects.toThrow(ModuleOptionsError);
    await expect(attempt).rejects.toThrow(
      /connection is not a testing-module option.*prefix is not.*queues is not.*worker is not/,
    );
  });

  it('validates the other options like the root module, unknown keys included', async () => {
    await expect(boot({ autoRun: 'yes' })).rejects.toThrow(/autoRun must be a boolean/);
    await expect(boot({ enqueueAfterComit: true })).rejects.toThrow(ModuleOptionsError);
    await expect(boot({ enqueueAfterComit: true })).rejects.toThrow(
      /enqueueAfterComit is not a known option/,
    );
    await expect(boot({ housekeeping: { batchSize: 0 } })).rejects.toThrow(
      /housekeeping\.batchSize/,
    );
  });

  it('defaults enqueueAfterCommit to false, keeps housekeeping timers off, and uses no BullMQ', async () => {
    const definition = GenevaDriveTestingModule.forRoot();
    expect(definition.global).toBe(true);
    expect(
      JSON.stringify((definition.imports ?? []).map((m) => (m as { name?: string }).name)),
    ).not.toMatch(/Bull/);

    const moduleRef = await boot({ housekeeping: { enabled: true } });
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const resolved = app.get<ResolvedGenevaDriveOptions>(GENEVA_DRIVE_RESOLVED_OPTIONS);
      expect([resolved.enqueueAfterCommit, resolved.housekeeping.enabled, resolved.worker]).toEqual(
        [false, false, false],
      );
      expect(app.get(StepJobQueue)).toBe(app.get(InMemoryStepJobQueue));
      expect(() => app.get(getQueueToken('geneva-drive'), { strict: false })).toThrow();
      expect(app.get(WorkflowRunner)).toBeInstanceOf(WorkflowRunner);
    } finally {
      await app.close();
    }
    const explicit = await boot({ enqueueAfterCommit: true });
    expect(
      explicit.get<ResolvedGenevaDriveOptions>(GENEVA_DRIVE_RESOLVED_OPTIONS).enqueueAfterCommit,
    ).toBe(true);
    await explicit.close();
  });
});
