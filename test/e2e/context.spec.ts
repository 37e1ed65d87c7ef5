import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { GenevaDriveTestingModule, WorkflowTestHelper } from 'nestjs-geneva-drive/testing';
import {
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS as CHANNELS,
  GENEVA_DRIVE_ENTITIES,
  GENEVA_DRIVE_MIGRATIONS,
  WorkflowService,
  InvalidArgumentError,
  MissingMigrationError,
} from '../../lib';
import { ContextJournal, ContextWorkflow } from '../fixtures/context.workflows';
import { testDatabaseLabel } from './support/database';
import { DiagnosticsRecorder } from './support/diagnostics-recorder';
import { EngineHarness } from './support/engine-harness';

/** `start(W, { context })` (SPEC §16.6): stored with the workflow, seen by every step as ctx.context. */
describe(`workflow context (${testDatabaseLabel})`, () => {
  let events: DiagnosticsRecorder;
  let harness: EngineHarness | null = null;

  beforeAll(() => {
    events = new DiagnosticsRecorder([CHANNELS.finalize]);
  });

  afterEach(async () => {
    await harness?.close();
    harness = null;
  });

  afterAll(() => events.close());

  const boot = (migrations = GENEVA_DRIVE_MIGRATIONS) =>
    EngineHarness.boot({ workflows: [ContextWorkflow], providers: [ContextJournal], migrations });

  it('hands the context to every step attempt, keys and values as given', async () => {
    harness = await boot();
    const context = { requestId: 'req-1', tenant: { id: 7, locale: 'de-CH' }, flags: [true, null] };
    const workflow = await harness.service.start(ContextWorkflow, { context });
    await events.until(
      CHANNELS.finalize,
      (event) => event.workflowId === workflow.id && event.workflowState === 'finished',
    );
    const seen = harness.get(ContextJournal).of(workflow.id);
    expect(seen.map((entry) => entry.step)).toEqual(['first', 'second', 'second']);
    for (const entry of seen) expect(entry.context).toEqual(context);
    expect(Object.keys(seen[0].context)).toEqual(['requestId', 'tenant', 'flags']);
  });

  it('is {} without a context', async () => {
    harness = await boot();
    const workflow = await harness.service.start(ContextWorkflow);
    await events.until(
      CHANNELS.finalize,
      (event) => event.workflowId === workflow.id && event.workflowState === 'finished',
    );
    const seen = harness.get(ContextJournal).of(workflow.id);
    expect(seen).toHaveLength(3);
    for (const entry of seen) expect(entry.context).toEqual({});
  });

  it('refuses a context over 4 KB of JSON, and one that is not JSON data, writing nothing', async () => {
    harness = await boot();
    const big = { blob: 'x'.repeat(4096) };
    await expect(harness.service.start(ContextWorkflow, { context: big })).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(harness.service.start(ContextWorkflow, { context: big })).rejects.toThrow(
      /4107 bytes of JSON, over the limit of 4096 bytes/,
    );
    await expect(
      harness.service.start(ContextWorkflow, { context: { at: BigInt(1) } }),
    ).rejects.toThrow(InvalidArgumentError);
    await expect(
      harness.service.start(ContextWorkflow, {
        context: 'req-1' as unknown as Record<string, unknown>,
      }),
    ).rejects.toThrow(/context must be a plain object/);
    await expect(harness.service.startMany(ContextWorkflow, [{ context: big }])).rejects.toThrow(
      /startMany\(\) starts\[0\] context is 4107 bytes/,
    );
    expect(await harness.service.list({ workflow: ContextWorkflow })).toEqual([]);
  });

  it('carries each startMany() entry its own context', async () => {
    harness = await boot();
    const started = await harness.service.startMany(ContextWorkflow, [
      { context: { n: 1 } },
      { context: { n: 2 } },
    ]);
    const [a, b] = started.map((workflow) => workflow!);
    for (const id of [a.id, b.id]) {
      await events.until(
        CHANNELS.finalize,
        (event) => event.workflowId === id && event.workflowState === 'finished',
      );
    }
    const journal = harness.get(ContextJournal);
    expect(journal.of(a.id).map((entry) => entry.context)).toEqual([{ n: 1 }, { n: 1 }, { n: 1 }]);
    expect(journal.of(b.id).map((entry) => entry.context)).toEqual([{ n: 2 }, { n: 2 }, { n: 2 }]);
  });

  it('before its migration: a context is refused naming the migration, workflows without one run', async () => {
    harness = await boot(
      GENEVA_DRIVE_MIGRATIONS.filter(
        (Migration) => !new Migration().name?.startsWith('GenevaDriveWorkflowContext'),
      ),
    );
    await expect(
      harness.service.start(ContextWorkflow, { context: { requestId: 'r' } }),
    ).rejects.toThrow(MissingMigrationError);
    await expect(
      harness.service.start(ContextWorkflow, { context: { requestId: 'r' } }),
    ).rejects.toThrow(/workflow-context migration, which has not run: add GENEVA_DRIVE_MIGRATIONS/);
    const workflow = await harness.service.start(ContextWorkflow, { context: {} });
    await events.until(
      CHANNELS.finalize,
      (event) => event.workflowId === workflow.id && event.workflowState === 'finished',
    );
    expect(
      harness
        .get(ContextJournal)
        .of(workflow.id)
        .map((entry) => entry.context),
    ).toEqual([{}, {}, {}]);
  });
});

describe('workflow context in GenevaDriveTestingModule', () => {
  it('hands the context to the steps the test helper runs', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'better-sqlite3',
          database: ':memory:',
          entities: GENEVA_DRIVE_ENTITIES,
          migrations: GENEVA_DRIVE_MIGRATIONS,
          migrationsRun: true,
        }),
        GenevaDriveTestingModule.forRoot(),
      ],
      providers: [ContextWorkflow, ContextJournal],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const workflow = await app.get(WorkflowService).start(ContextWorkflow, {
        context: { requestId: 'req-9' },
      });
      await app.get(WorkflowTestHelper).speedrunWorkflow(workflow);
      expect(app.get(ContextJournal).of(workflow.id)).toEqual([
        { step: 'first', context: { requestId: 'req-9' } },
        { step: 'second', context: { requestId: 'req-9' } },
        { step: 'second', context: { requestId: 'req-9' } },
      ]);
    } finally {
      await app.close();
    }
  });
});
