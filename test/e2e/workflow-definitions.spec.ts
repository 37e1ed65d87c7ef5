import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  GenevaDriveModule,
  ModuleOptionsError,
  Step,
  StepConfigurationError,
  StepExecutionEntity,
  Workflow,
} from '../../lib';
import {
  EmptyWorkflow,
  ExpressFulfillment,
  ForgetfulAroundWorkflow,
  GravestoneWorkflow,
  RequestScopedWorkflow,
  ShapedWorkflow,
} from '../fixtures/definition.workflows';
import { Order } from '../fixtures/order.entity';
import { StepJournal } from '../fixtures/step-journal';
import {
  connectionOptions,
  createSchema,
  dataSourceOptions,
  dropSchema,
  testDatabaseLabel,
} from './support/database';
import { EngineHarness } from './support/engine-harness';

describe(`workflow definitions at runtime (${testDatabaseLabel} + BullMQ)`, () => {
  let harness: EngineHarness;
  let journal: StepJournal;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [
        ExpressFulfillment,
        ShapedWorkflow,
        ForgetfulAroundWorkflow,
        GravestoneWorkflow,
        EmptyWorkflow,
      ],
      providers: [StepJournal],
      entities: [Order],
    });
    journal = harness.get(StepJournal);
  });

  afterAll(() => harness?.close());
  beforeEach(() => journal.entries.splice(0));

  const newOrder = (status = 'new') => harness.dataSource.getRepository(Order).save({ status });

  it('inheritance: parent steps first, positioned steps, overridden bodies', async () => {
    const workflow = await harness.service.start(ExpressFulfillment, { hero: await newOrder() });
    await harness.waitForState(workflow.id, 'finished');
    expect(journal.entries).toEqual([
      'base:validate',
      'express:expedite',
      'express:notify',
      'express:archive',
    ]);
  });

  it('aroundStepExecution, skipIf in every form, gravestones and repeat steps', async () => {
    const workflow = await harness.service.start('shaped', { hero: await newOrder('express') });
    expect(workflow.type).toBe('shaped');
    await harness.waitForState(workflow.id, 'finished');
    expect(journal.entries).toEqual([
      'around-in:poll_1',
      'poll_1',
      'around-out:poll_1',
      'around-in:poll_2',
      'poll_2',
      'around-out:poll_2',
      'around-in:poll_3',
      'poll_3',
      'around-out:poll_3',
    ]);
    const history = await harness.history(workflow.id);
    expect(history.map((e) => `${e.stepName}:${e.state}`)).toEqual([
      'never:skipped',
      'slowLane:skipped',
      'bigOrderCheck:skipped',
      'poll_1:completed',
      'poll_2:skipped',
      'poll_3:completed',
    ]);
    const [, , , poll1, poll2] = history;
    expect(poll2.scheduledFor.getTime() - poll1.finishedAt!.getTime()).toBeGreaterThanOrEqual(9);
  });

  it('an around hook that never calls next() completes the step without its body', async () => {
    const workflow = await harness.service.start(ForgetfulAroundWorkflow, {
      hero: await newOrder(),
    });
    await harness.waitForState(workflow.id, 'finished');
    expect(journal.entries).toEqual(['around-without-next']);
  });

  it('an in-flight execution of a removed step is skipped and the workflow continues', async () => {
    const workflow = await harness.service.start(GravestoneWorkflow, { hero: await newOrder() });
    const first = await harness.service.currentExecution(workflow);
    await harness.dataSource
      .getRepository(StepExecutionEntity)
      .update({ id: first!.id }, { stepName: 'legacy' });
    expect(await harness.service.removedStepsInFlight(GravestoneWorkflow)).toEqual({ legacy: 1 });
    await harness.runner.performStep(first!.id);
    await harness.waitForState(workflow.id, 'finished');
    const history = await harness.history(workflow.id);
    expect(history.map((e) => `${e.stepName}:${e.state}/${e.outcome}`)).toEqual([
      'legacy:skipped/skipped',
      'end:completed/success',
    ]);
    expect(await harness.service.removedStepsInFlight(GravestoneWorkflow)).toEqual({});
    expect(journal.entries).toEqual(['end']);
  });

  it('a workflow without runnable steps is finished on creation', async () => {
    const workflow = await harness.service.start(EmptyWorkflow);
    expect(workflow.state).toBe('finished');
    expect(await harness.history(workflow.id)).toEqual([]);
  });

  it('previousStepName() follows the run order', async () => {
    const workflow = await harness.service.start(ExpressFulfillment, { hero: await newOrder() });
    const finished = await harness.waitForState(workflow.id, 'finished');
    expect(await harness.service.previousStepName(finished)).toBe('archive');
  });
});

describe('boot-time validation', () => {
  let schema: string;
  beforeAll(async () => (schema = await createSchema()));
  afterAll(() => dropSchema(schema));

  type Database = 'with-entities' | 'without-entities' | 'none';

  async function boot(
    providers: unknown[],
    moduleImport = GenevaDriveModule.forRoot({ worker: false, housekeeping: { enabled: false } }),
    database: Database = 'with-entities',
  ) {
    const typeorm = {
      'with-entities': () => [
        TypeOrmModule.forRoot({ ...dataSourceOptions(schema, [Order]), retryAttempts: 0 }),
      ],
      'without-entities': () => [
        TypeOrmModule.forRoot({
          ...connectionOptions(schema),
          entities: [Order],
          retryAttempts: 0,
        }),
      ],
      none: () => [],
    }[database]();
    const moduleRef = await Test.createTestingModule({
      imports: [...typeorm, moduleImport],
      providers: [StepJournal, ...(providers as never[])],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    try {
      await app.init();
    } finally {
      await app.close();
    }
  }

  it('a bad step option fails boot naming the workflow, the step and the fix', async () => {
    @Workflow()
    class BadWait {
      @Step({ wait: 'payment_confirmed' }) capture() {}
    }
    await expect(boot([BadWait])).rejects.toThrow(
      new StepConfigurationError(
        "Workflow BadWait, step 'capture': has wait: 'payment_confirmed' — wait takes a duration; to wait for a signal, use waitFor.",
      ),
    );
  });

  it('two workflows registered under one name fail boot', async () => {
    @Workflow({ name: 'twin' })
    class TwinA {
      @Step() a() {}
    }
    @Workflow({ name: 'twin' })
    class TwinB {
      @Step() b() {}
    }
    await expect(boot([TwinA, TwinB])).rejects.toThrow(
      /Workflow name 'twin' is registered by both TwinA and TwinB/,
    );
  });

  it('a request-scoped workflow is refused', async () => {
    await expect(boot([RequestScopedWorkflow])).rejects.toThrow(/request-scoped or transient/);
  });

  it('a data source without GENEVA_DRIVE_ENTITIES fails boot with ModuleOptionsError', async () => {
    await expect(boot([], undefined, 'without-entities')).rejects.toThrow(
      new ModuleOptionsError(
        'The TypeORM data source does not register WorkflowEntity. Add GENEVA_DRIVE_ENTITIES to its entities (and GENEVA_DRIVE_MIGRATIONS to its migrations).',
      ),
    );
  });

  it('invalid module options fail boot naming every offending key', async () => {
    const bad = GenevaDriveModule.forRoot({ prefix: 'a:b', piority: 3 } as never);
    const error = await boot([], bad, 'none').catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ModuleOptionsError);
    expect((error as Error).message).toMatch(/piority/);
    expect((error as Error).message).toMatch(/prefix/);
  });

  it('a step routed to a queue this process does not consume is reported at boot', async () => {
    @Workflow()
    class Routed {
      @Step({ jobOptions: { queue: 'reports' } }) build() {}
    }
    const warnings: string[] = [];
    const logger = {
      log: () => undefined,
      error: () => undefined,
      warn: (m: string) => void warnings.push(m),
    };
    await boot(
      [Routed],
      GenevaDriveModule.forRoot({
        prefix: `gd-boot-${Date.now()}`,
        housekeeping: { enabled: false },
        logger,
      }),
    );
    expect(warnings).toEqual([
      "Queue 'reports' is used by Routed.build but this process consumes only geneva-drive. Add it to the module's queues option here, or make sure another process consumes it.",
    ]);
  });

  it('forRootAsync resolves options from a factory with injected dependencies', async () => {
    await expect(
      boot(
        [],
        GenevaDriveModule.forRootAsync({
          useFactory: () => ({ worker: false, housekeeping: { enabled: false } }),
        }),
      ),
    ).resolves.toBeUndefined();
    await expect(
      boot(
        [],
        GenevaDriveModule.forRootAsync({ useFactory: () => ({ defaultQueue: 'x:y' }) }),
        'none',
      ),
    ).rejects.toThrow(ModuleOptionsError);
  });
});
