import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { relative } from 'node:path';
import {
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS as CHANNELS,
  GenevaDriveModule,
  StepExecutionEntity,
  type GenevaDriveModuleOptions,
  type HousekeepingResult,
  type WorkflowEntity,
} from '../../lib';
import { runGenevaDriveCli } from '../../lib/cli';
import { InjectResolvedOptions } from '../../lib/options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../../lib/options/resolved-options.interface';
import { Order } from '../fixtures/order.entity';
import { PaymentWorkflow } from '../fixtures/signal.workflows';
import { LongTimeoutWorkflow } from '../fixtures/timeout.workflows';
import { StepScript } from '../fixtures/step-script';
import { dataSourceOptions, testDatabase, testDatabaseLabel } from './support/database';
import { DiagnosticsRecorder } from './support/diagnostics-recorder';
import { EngineHarness } from './support/engine-harness';
import { openTestRedis, testRedisLabel } from './support/redis';
import { describeIf } from './support/describe-if';
import { testTransport } from './support/transport';

/** Records the options the app booted by the CLI resolved (its worker must be off). */
@Injectable()
class OptionsSpy {
  static readonly seen: ResolvedGenevaDriveOptions[] = [];

  constructor(@InjectResolvedOptions() options: ResolvedGenevaDriveOptions) {
    OptionsSpy.seen.push(options);
  }
}

@Module({})
class CliTestAppModule {}

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** doctor's statements check: PostgreSQL's (unnamed, the default: ok), skipped elsewhere. */
const STATEMENTS_CHECKED = testDatabase === 'postgres' ? 'statements:ok' : 'statements:skipped';

/**
 * `geneva-drive` (SPEC §16.4) run in process against a deployment whose worker is a harness app:
 * the CLI boots an app module of its own on the same database and Redis prefix, with the worker off.
 */
// The CLI boots the spec's own app module, on Redis: not on the PostgreSQL or local transport runs
// (the CLI refuses a 'local' app: it boots with worker: false).
describeIf(testTransport === 'redis')(
  `geneva-drive CLI (${testDatabaseLabel}, ${testRedisLabel})`,
  () => {
    let harness: EngineHarness;
    let events: DiagnosticsRecorder;
    let redis: ReturnType<typeof openTestRedis>;

    /** The user's module as `--app` would name it: worker: true in its options, on purpose. */
    const appModule = (options: GenevaDriveModuleOptions = {}): DynamicModule => ({
      module: CliTestAppModule,
      imports: [
        TypeOrmModule.forRoot({
          ...dataSourceOptions(harness.schema, [Order]),
          migrationsRun: false,
        }),
        GenevaDriveModule.forRoot({
          connection: redis.connection,
          prefix: harness.prefix,
          worker: true,
          housekeeping: { enabled: false },
          ...options,
        }),
      ],
      providers: [PaymentWorkflow, LongTimeoutWorkflow, StepScript, OptionsSpy],
    });

    async function cli(args: string[], app: DynamicModule | null = appModule()): Promise<CliRun> {
      const stdout: string[] = [];
      const stderr: string[] = [];
      const code = await runGenevaDriveCli(args, {
        ...(app ? { app } : {}),
        streams: {
          stdout: { write: (text: string) => stdout.push(text) },
          stderr: { write: (text: string) => stderr.push(text) },
        },
      });
      return { code, stdout: stdout.join(''), stderr: stderr.join('') };
    }

    /** A `--json` run: its exit code and its one JSON document. */
    async function cliJson<T>(
      args: string[],
      app?: DynamicModule | null,
    ): Promise<{ code: number; doc: T }> {
      const run = await cli([...args, '--json'], app);
      return { code: run.code, doc: JSON.parse(run.stdout) as T };
    }

    const startParked = async () => {
      const hero = await harness.dataSource.getRepository(Order).save({ status: 'new' });
      const workflow = await harness.service.start(PaymentWorkflow, { hero });
      await events.forWorkflow(CHANNELS.park, workflow.id);
      return { workflow, hero };
    };

    beforeAll(async () => {
      events = new DiagnosticsRecorder([CHANNELS.finalize, CHANNELS.park]);
      harness = await EngineHarness.boot({
        workflows: [PaymentWorkflow, LongTimeoutWorkflow],
        providers: [StepScript],
        entities: [Order],
      });
      redis = openTestRedis();
    });

    afterAll(async () => {
      await harness?.close();
      await redis?.release();
      events.close();
    });

    it('boots the app with the worker off whatever its options say, and restores GENEVA_DRIVE_WORKER', async () => {
      OptionsSpy.seen.length = 0;
      const run = await cli(['list']);
      expect(run.code).toBe(0);
      expect(OptionsSpy.seen.map((options) => options.worker)).toEqual([false]);
      expect(process.env.GENEVA_DRIVE_WORKER).toBeUndefined();
    });

    it('signal delivers (a second time with the same key is a duplicate), show lists executions and signals', async () => {
      const { workflow } = await startParked();
      const delivered = await cliJson<{ signal: { id: string; name: string; payload: unknown } }>([
        'signal',
        workflow.id,
        'payment',
        '--payload',
        '{"amount": 5}',
        '--key',
        'k1',
      ]);
      expect(delivered.code).toBe(0);
      expect(delivered.doc.signal).toMatchObject({ name: 'payment', payload: { amount: 5 } });
      await events.forWorkflow(CHANNELS.finalize, workflow.id, 3);

      const again = await cli(['signal', workflow.id, 'payment', '--key', 'k1']);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain(`was delivered before (signal ${delivered.doc.signal.id})`);

      const shown = await cliJson<{
        workflow: WorkflowEntity;
        executions: Array<{ stepName: string; outcome: string }>;
        signals: Array<{ id: string; idempotencyKey: string; state: string }>;
      }>(['show', workflow.id]);
      expect(shown.code).toBe(0);
      expect(shown.doc.workflow).toMatchObject({
        id: workflow.id,
        state: 'finished',
        type: 'PaymentWorkflow',
      });
      expect(shown.doc.executions.map((e) => `${e.stepName}:${e.outcome}`)).toEqual([
        'prepare:success',
        'capture:success',
        'ship:success',
      ]);
      expect(shown.doc.signals).toEqual([
        expect.objectContaining({
          id: delivered.doc.signal.id,
          idempotencyKey: 'k1',
          state: 'consumed',
        }),
      ]);

      const text = await cli(['show', workflow.id]);
      expect(text.stdout).toMatch(/^state: +finished$/m);
      expect(text.stdout).toMatch(/^Executions\nID +STEP +STATE +OUTCOME/m);
      expect(text.stdout).toContain('capture');
    });

    it("show gives a parked step's wait deadline (the execution's waitDeadlineAt in --json)", async () => {
      const hero = await harness.dataSource.getRepository(Order).save({ status: 'new' });
      const workflow = await harness.service.start(LongTimeoutWorkflow, { hero });
      await events.forWorkflow(CHANNELS.park, workflow.id);
      const executions = await harness.service.executionHistory(workflow);
      const parked = executions.find((execution) => execution.stepName === 'capture');
      expect(parked?.waitDeadlineAt).toBeInstanceOf(Date);
      const deadline = parked!.waitDeadlineAt!.toISOString();

      const shown = await cliJson<{
        executions: Array<{ stepName: string; waitDeadlineAt: string | null }>;
      }>(['show', workflow.id]);
      expect(shown.doc.executions).toEqual([
        expect.objectContaining({ stepName: 'prepare', waitDeadlineAt: null }),
        expect.objectContaining({ stepName: 'capture', waitDeadlineAt: deadline }),
      ]);

      const text = await cli(['show', workflow.id]);
      expect(text.stdout).toMatch(/^ID +STEP +STATE +OUTCOME +SCHEDULED FOR +WAIT DEADLINE /m);
      expect(text.stdout).toMatch(
        new RegExp(`capture +waiting .*${deadline.replace(/\./g, '\\.')}`),
      );
    });

    it('list filters by state, class and hero, newest first, within the limit', async () => {
      const first = await startParked();
      const second = await startParked();
      const ids = (doc: { workflows: Array<{ id: string }> }) => doc.workflows.map((row) => row.id);

      const ready = await cliJson<{ workflows: WorkflowEntity[] }>([
        'list',
        '--state',
        'ready',
        '--class',
        'PaymentWorkflow',
      ]);
      expect(ready.code).toBe(0);
      expect(ids(ready.doc).slice(0, 2)).toEqual([second.workflow.id, first.workflow.id]);
      expect(ready.doc.workflows.every((row) => row.state === 'ready')).toBe(true);

      const limited = await cliJson<{ workflows: WorkflowEntity[] }>(['list', '--limit', '1']);
      expect(ids(limited.doc)).toEqual([second.workflow.id]);

      const byHero = await cliJson<{ workflows: WorkflowEntity[] }>([
        'list',
        '--hero-type',
        second.workflow.heroType!,
        '--hero-id',
        String(second.hero.id),
      ]);
      expect(ids(byHero.doc)).toEqual([second.workflow.id]);

      const none = await cli(['list', '--class', 'NoSuchWorkflow']);
      expect(none).toMatchObject({ code: 0, stdout: 'No workflows match.\n' });

      const table = await cli(['list', '--limit', '2']);
      expect(table.stdout.split('\n')[0]).toMatch(/^ID +CLASS +STATE +STEP +HERO +CREATED$/);
      expect(table.stdout).toContain(second.workflow.id);
    });

    it('pause, resume-at, skip and cancel steer workflows; each id is answered on its own', async () => {
      const { workflow } = await startParked();
      const paused = await cliJson<{ results: Array<{ id: string; ok: boolean; state: string }> }>([
        'pause',
        workflow.id,
      ]);
      expect(paused).toEqual({
        code: 0,
        doc: { results: [{ id: workflow.id, ok: true, state: 'paused' }] },
      });

      const resumed = await cliJson<{ execution: { stepName: string; state: string } }>([
        'resume-at',
        workflow.id,
        'prepare',
      ]);
      expect(resumed.code).toBe(0);
      expect(resumed.doc.execution).toMatchObject({ stepName: 'prepare', state: 'scheduled' });
      // prepare runs again on the harness's worker, then capture parks again.
      await events.forWorkflow(CHANNELS.park, workflow.id, 2);

      const skipped = await cli(['skip', workflow.id]);
      expect(skipped.code).toBe(0);
      expect(skipped.stdout).toMatch(new RegExp(`^${workflow.id} +skip: ready$`, 'm'));
      await harness.waitForState(workflow.id, 'finished');

      const other = await startParked();
      const unknown = randomUUID();
      const canceled = await cliJson<{
        results: Array<{ id: string; ok: boolean; state?: string; error?: { name: string } }>;
      }>(['cancel', other.workflow.id, unknown]);
      expect(canceled.code).toBe(1);
      expect(canceled.doc.results).toEqual([
        { id: other.workflow.id, ok: true, state: 'canceled' },
        {
          id: unknown,
          ok: false,
          error: { name: 'WorkflowNotFoundError', message: `No workflow with id '${unknown}'.` },
        },
      ]);

      const resumeCanceled = await cli(['resume', other.workflow.id]);
      expect(resumeCanceled.code).toBe(1);
      expect(resumeCanceled.stdout).toMatch(/refused: /);
    });

    it('refuses (exit 1) to pause a finished workflow and to show an unknown id', async () => {
      const { workflow } = await startParked();
      await harness.service.cancel(workflow.id);
      const pause = await cliJson<{ results: Array<{ ok: boolean; error: { name: string } }> }>([
        'pause',
        workflow.id,
      ]);
      expect(pause.code).toBe(1);
      expect(pause.doc.results[0]).toMatchObject({
        ok: false,
        error: { name: 'InvalidStateError' },
      });

      const show = await cliJson<{ error: { name: string; message: string }; exitCode: number }>([
        'show',
        'not-a-uuid',
      ]);
      expect(show).toEqual({
        code: 1,
        doc: {
          error: {
            name: 'WorkflowNotFoundError',
            message:
              "No workflow with id 'not-a-uuid': workflow ids are UUIDs (WorkflowEntity.id).",
          },
          exitCode: 1,
        },
      });
      const text = await cli(['signal', randomUUID(), 'payment']);
      expect(text.code).toBe(1);
      expect(text.stderr).toMatch(/^geneva-drive: No workflow with id/m);
    });

    it('housekeeping runs one pass and prints its HousekeepingResult', async () => {
      const run = await cliJson<HousekeepingResult>(['housekeeping']);
      expect(run.code).toBe(0);
      expect(Object.keys(run.doc).sort()).toEqual([
        'lostJobsReenqueued',
        'signalsCleanedUp',
        'signalsExpired',
        'skipped',
        'stepExecutionsCleanedUp',
        'stuckInProgressRecovered',
        'stuckScheduledRecovered',
        'waitTimeoutsFired',
        'workflowsCleanedUp',
      ]);
      expect(run.doc).toMatchObject({ skipped: false });
      expect((await cli(['housekeeping'])).stdout).toMatch(/^workflows cleaned up: +\d+$/m);
    });

    it('housekeeping counts the wait timeouts it fired (not in HousekeepingResult)', async () => {
      const hero = await harness.dataSource.getRepository(Order).save({ status: 'new' });
      const overdue = await harness.service.start(LongTimeoutWorkflow, { hero });
      await events.forWorkflow(CHANNELS.park, overdue.id);
      // Its deadline passed while no timeout job fired: the sweep is the backstop.
      await harness.dataSource
        .getRepository(StepExecutionEntity)
        .update(
          { workflowId: overdue.id, stepName: 'capture' },
          { waitDeadlineAt: new Date(Date.now() - 60_000) },
        );
      const run = await cliJson<HousekeepingResult & Record<string, number>>(['housekeeping']);
      expect(run.doc).toMatchObject({ waitTimeoutsFired: 1, skipped: false });
      const text = await cli(['housekeeping']);
      expect(text.stdout).toMatch(/^wait timeouts fired: +0$/m);
    });

    it('doctor passes every check while the worker runs, naming what it saw', async () => {
      const run = await cliJson<{
        healthy: boolean;
        checks: Array<{ name: string; status: string; message: string }>;
      }>(['doctor']);
      expect(run.code).toBe(0);
      expect(run.doc.healthy).toBe(true);
      expect(run.doc.checks.map((check) => `${check.name}:${check.status}`)).toEqual([
        'database:ok',
        'migrations:ok',
        STATEMENTS_CHECKED,
        'transport:ok',
        'workers:ok',
        'versions:ok',
      ]);
      // The harness's worker; the CLI's own app (worker off) is not one.
      expect(run.doc.checks[4].message).toBe('workers seen per queue: geneva-drive: 1');
      expect(run.doc.checks[5].message).toMatch(/^supported: @nestjs\/common \d/);
    });

    describe('usage errors (exit 2)', () => {
      it.each([
        [['list', '--limit', '0'], /--limit '0' is not a whole number/],
        [['list', '--state', 'done'], /--state 'done' names no workflow state/],
        [['signal', randomUUID(), 'payment', '--payload', '{x'], /--payload is not JSON/],
        [['show'], /missing required argument 'id'/],
        [['show', 'a', 'b'], /expected a workflow id, but got 'a' 'b'/],
        [['list', '--bogus'], /unknown option '--bogus'/],
        [['launch'], /unknown command 'launch'/],
        [['list', '--app'], /--app needs a value/],
      ])('%j', async (args, message) => {
        const run = await cli(args);
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(message);
        expect(run.stdout).toBe('');
      });

      it('--json: the usage error is the JSON document', async () => {
        expect(await cliJson(['resume-at', randomUUID()])).toEqual({
          code: 2,
          doc: {
            error: { name: 'CommanderError', message: "error: missing required argument 'step'" },
            exitCode: 2,
          },
        });
      });

      it('without --app (or an app given) a command says how to name one', async () => {
        const run = await cli(['list'], null);
        expect(run.code).toBe(2);
        expect(run.stderr).toContain('no app to run against: pass --app <file>#<export>');
      });

      it('--app naming a missing file or export says so', async () => {
        const missing = await cli(['--app', 'no/such/file.js#AppModule', 'list'], null);
        expect(missing.code).toBe(2);
        expect(missing.stderr).toMatch(/--app: no file at .*no\/such\/file\.js/);
        const file = relative(
          process.cwd(),
          require.resolve('../fixtures/cli/unreachable-app.module.ts'),
        );
        const wrongExport = await cli(['--app', `${file}#AppModule`, 'list'], null);
        expect(wrongExport.code).toBe(2);
        expect(wrongExport.stderr).toContain(
          "exports no module named 'AppModule' (it exports UnreachableAppModule)",
        );
      });

      it("an app on transport 'local' is refused when its module loads, saying why", async () => {
        const file = relative(
          process.cwd(),
          require.resolve('../fixtures/cli/local-transport-app.module.ts'),
        );
        const run = await cli(['--app', `${file}#LocalTransportAppModule`, 'list'], null);
        expect(run.code).toBe(2);
        expect(run.stderr).toContain(
          "transport 'local' runs steps in this process only, so it cannot run with GENEVA_DRIVE_WORKER=off (set by the geneva-drive CLI)",
        );
        expect(process.env.GENEVA_DRIVE_WORKER).toBeUndefined();
      });

      it('--help is done (exit 0), with the exit codes', async () => {
        const run = await cli(['--help'], null);
        expect(run.code).toBe(0);
        expect(run.stdout).toContain('Usage: geneva-drive [options] [command]');
        expect(run.stdout).toContain('3  cannot connect');
      });
    });

    describe('cannot connect (exit 3)', () => {
      const app = `${relative(process.cwd(), require.resolve('../fixtures/cli/unreachable-app.module.ts'))}#UnreachableAppModule`;

      it('a command against a database nothing answers for', async () => {
        const run = await cliJson<{ error: { name: string; message: string }; exitCode: number }>(
          ['--app', app, 'list'],
          null,
        );
        expect(run.code).toBe(3);
        expect(run.doc.exitCode).toBe(3);
        expect(run.doc.error.name).toBe('CliConnectionError');
        expect(run.doc.error.message).toMatch(/^the app could not connect while booting: /);
      });

      it('doctor names the database as the failed check', async () => {
        const run = await cliJson<{
          healthy: boolean;
          checks: Array<{ name: string; status: string }>;
        }>(['--app', app, 'doctor'], null);
        expect(run.code).toBe(3);
        expect(run.doc.healthy).toBe(false);
        expect(run.doc.checks.map((check) => `${check.name}:${check.status}`)).toEqual([
          'database:fail',
          'migrations:skipped',
          'statements:skipped',
          'transport:skipped',
          'workers:skipped',
          'versions:ok',
        ]);
      });

      it('doctor names the transport when Redis does not answer', async () => {
        const run = await cliJson<{
          checks: Array<{ name: string; status: string; message: string }>;
        }>(
          ['doctor'],
          appModule({ connection: { host: '127.0.0.1', port: 1, retryStrategy: () => null } }),
        );
        expect(run.code).toBe(3);
        expect(run.doc.checks.map((check) => `${check.name}:${check.status}`)).toEqual([
          'database:ok',
          'migrations:ok',
          STATEMENTS_CHECKED,
          'transport:fail',
          'workers:skipped',
          'versions:ok',
        ]);
        expect(run.doc.checks[3].message).toMatch(
          /^Redis at 127\.0\.0\.1:1: .*Check the module's connection option \(host, port, credentials\)/,
        );
      });
    });
  },
);
