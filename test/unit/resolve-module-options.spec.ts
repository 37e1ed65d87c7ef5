import { ConsoleLogger, Logger } from '@nestjs/common';
import { Cluster, Redis } from 'ioredis';
import { ModuleOptionsError } from '../../lib';
import type { GenevaDriveModuleOptions } from '../../lib';
import { defaultQueues, resolveModuleOptions } from '../../lib/options/resolve-module-options';

/** Options the public types forbid, as a JavaScript user or a typo could pass them. */
function untyped(options: Record<string, unknown>): GenevaDriveModuleOptions {
  return options;
}

function errorOf(options: unknown, source?: string): ModuleOptionsError {
  try {
    resolveModuleOptions(options as GenevaDriveModuleOptions, source);
  } catch (error) {
    expect(error).toBeInstanceOf(ModuleOptionsError);
    return error as ModuleOptionsError;
  }
  throw new Error('expected resolveModuleOptions to throw');
}

describe('resolveModuleOptions', () => {
  describe('defaults (SPEC §2)', () => {
    it('applies every documented default when no options are given', () => {
      expect(resolveModuleOptions(undefined)).toEqual({
        connection: { host: '127.0.0.1', port: 6379 },
        prefix: 'geneva-drive',
        dataSource: undefined,
        queues: { 'geneva-drive': { concurrency: 10 } },
        defaultQueue: 'geneva-drive',
        transport: 'redis',
        worker: true,
        enqueueAfterCommit: true,
        housekeeping: {
          enabled: true,
          cron: '*/5 * * * *',
          deleteCompletedWorkflowsAfterMs: 30 * 86_400_000,
          stuckInProgressThresholdMs: 3_600_000,
          stuckScheduledThresholdMs: 15 * 60_000,
          stuckRecoveryAction: 'reattempt',
          batchSize: 1000,
          maxRunDurationMs: 240_000,
          reconcileScheduledJobs: true,
        },
        stepChaining: { maxSteps: 100, maxDurationMs: 1000 },
        preparedStatements: false,
        maxCursorSize: 131072,
        maxSignalPayloadSize: 131072,
        waitingVisibilityThresholdMs: 7 * 86_400_000,
        signalRetentionMs: null,
        errorReporter: null,
        metrics: null,
        logger: null,
        allowUnsupportedVersions: false,
        tracing: false,
        clsKeys: [],
      });
      expect(resolveModuleOptions({})).toEqual(resolveModuleOptions(undefined));
    });

    it('keeps given values and converts durations to milliseconds', () => {
      const errorReporter = jest.fn();
      const metrics = { gauge: jest.fn() };
      const logger = new Logger('test');
      const resolved = resolveModuleOptions({
        connection: { host: 'redis', port: 6380, db: 2, password: 'x' },
        prefix: 'app',
        dataSource: 'jobs',
        queues: { fast: { concurrency: 50 }, slow: {} },
        defaultQueue: 'fast',
        worker: false,
        enqueueAfterCommit: false,
        housekeeping: {
          enabled: false,
          cron: '0 * * * *',
          deleteCompletedWorkflowsAfter: '2 days',
          stuckInProgressThreshold: 5000,
          stuckScheduledThreshold: '1m',
          stuckRecoveryAction: 'cancel',
          batchSize: 10,
          maxRunDuration: '30s',
          reconcileScheduledJobs: false,
        },
        maxChainedSteps: 0,
        preparedStatements: false,
        maxCursorSize: 1024,
        maxSignalPayloadSize: 2048,
        waitingVisibilityThreshold: '1h',
        signalRetention: '30d',
        errorReporter,
        metrics,
        logger,
        allowUnsupportedVersions: true,
      });
      expect(resolved).toEqual({
        connection: { host: 'redis', port: 6380, db: 2, password: 'x' },
        prefix: 'app',
        dataSource: 'jobs',
        queues: { fast: { concurrency: 50 }, slow: { concurrency: 10 } },
        defaultQueue: 'fast',
        transport: 'redis',
        worker: false,
        enqueueAfterCommit: false,
        housekeeping: {
          enabled: false,
          cron: '0 * * * *',
          deleteCompletedWorkflowsAfterMs: 172_800_000,
          stuckInProgressThresholdMs: 5000,
          stuckScheduledThresholdMs: 60_000,
          stuckRecoveryAction: 'cancel',
          batchSize: 10,
          maxRunDurationMs: 30_000,
          reconcileScheduledJobs: false,
        },
        stepChaining: { maxSteps: 0, maxDurationMs: 1000 },
        preparedStatements: false,
        maxCursorSize: 1024,
        maxSignalPayloadSize: 2048,
        waitingVisibilityThresholdMs: 3_600_000,
        signalRetentionMs: 30 * 86_400_000,
        errorReporter,
        metrics,
        logger,
        allowUnsupportedVersions: true,
        tracing: false,
        clsKeys: [],
      });
      // Instances are passed through, not copied.
      expect(resolved.logger).toBe(logger);
      expect(resolved.metrics).toBe(metrics);
    });

    it('fills only the missing housekeeping keys', () => {
      const { housekeeping } = resolveModuleOptions({ housekeeping: { batchSize: 5 } });
      expect(housekeeping.batchSize).toBe(5);
      expect(housekeeping.cron).toBe('*/5 * * * *');
      expect(housekeeping.enabled).toBe(true);
    });

    it('defaultQueues gives concurrency 10 to entries without one', () => {
      expect(defaultQueues(undefined)).toEqual({ 'geneva-drive': { concurrency: 10 } });
      expect(defaultQueues({ a: {}, b: { concurrency: 3 } })).toEqual({
        a: { concurrency: 10 },
        b: { concurrency: 3 },
      });
    });
  });

  describe('null, only where documented', () => {
    it('disables cleanup, cursor and payload limits and the overdue gauge', () => {
      const resolved = resolveModuleOptions({
        housekeeping: { deleteCompletedWorkflowsAfter: null },
        maxCursorSize: null,
        maxSignalPayloadSize: null,
        waitingVisibilityThreshold: null,
      });
      expect(resolved.housekeeping.deleteCompletedWorkflowsAfterMs).toBeNull();
      expect(resolved.maxCursorSize).toBeNull();
      expect(resolved.maxSignalPayloadSize).toBeNull();
      expect(resolved.waitingVisibilityThresholdMs).toBeNull();
    });

    it.each([
      'connection',
      'prefix',
      'dataSource',
      'queues',
      'defaultQueue',
      'worker',
      'enqueueAfterCommit',
      'housekeeping',
      'errorReporter',
      'metrics',
      'logger',
    ])('is refused for %s', (key) => {
      expect(errorOf({ [key]: null }).message).toContain(key);
    });

    it.each([
      'enabled',
      'cron',
      'stuckInProgressThreshold',
      'stuckScheduledThreshold',
      'stuckRecoveryAction',
      'batchSize',
      'reconcileScheduledJobs',
    ])('is refused for housekeeping.%s', (key) => {
      expect(errorOf({ housekeeping: { [key]: null } }).message).toContain(`housekeeping.${key}`);
    });
  });

  describe('unknown keys', () => {
    it('are refused, naming each of them', () => {
      const error = errorOf({ prefx: 'x', workers: 2 });
      expect(error.message).toContain('prefx is not a known option');
      expect(error.message).toContain('workers is not a known option');
    });

    it('name the option a misspelt key most likely meant', () => {
      const message = errorOf({
        preparedStatement: true,
        Prefix: 'x',
        maxChainedStep: 5,
        housekeeping: { enabeld: false },
      }).message;
      expect(message).toContain(
        'preparedStatement is not a known option (did you mean preparedStatements?)',
      );
      expect(message).toContain('Prefix is not a known option (did you mean prefix?)');
      expect(message).toContain(
        'maxChainedStep is not a known option (did you mean maxChainedSteps?)',
      );
      expect(message).toContain(
        'housekeeping.enabeld is not a known option (did you mean housekeeping.enabled?)',
      );
    });

    it('suggest nothing when no known option is close, or several are', () => {
      // lowker: two edits from both logger and worker.
      const message = errorOf({ retentionPeriod: 1, lowker: 1, constructor: 1 }).message;
      expect(message).toContain('retentionPeriod is not a known option;');
      expect(message).toContain('lowker is not a known option;');
      expect(message).toMatch(/constructor is not a known option\.$/);
      expect(message).not.toContain('did you mean');
    });

    it('are refused inside housekeeping, with the path', () => {
      expect(errorOf({ housekeeping: { cronn: '* * * * *' } }).message).toContain(
        'housekeeping.cronn is not a known option',
      );
    });

    it('name the source of the options', () => {
      expect(errorOf({ nope: 1 }, 'GenevaDriveModule.forRootAsync()').message).toMatch(
        /^GenevaDriveModule\.forRootAsync\(\) has invalid options: /,
      );
      expect(errorOf({ nope: 1 }).message).toMatch(
        /^GenevaDriveModule\.forRoot\(\) has invalid options: /,
      );
    });
  });

  describe('wrong types', () => {
    it.each<[string, Record<string, unknown>, RegExp]>([
      ['prefix with a colon', { prefix: 'a:b' }, /prefix: prefix must not contain ":"/],
      ['prefix as a number', { prefix: 5 }, /prefix: prefix must be a string/],
      [
        'defaultQueue with a colon',
        { defaultQueue: 'q:1' },
        /defaultQueue: defaultQueue must not contain ":"/,
      ],
      ['dataSource as a number', { dataSource: 1 }, /dataSource: /],
      ['worker as a string', { worker: 'yes' }, /worker: worker must be a boolean/],
      ['enqueueAfterCommit as a number', { enqueueAfterCommit: 1 }, /enqueueAfterCommit: /],
      [
        'allowUnsupportedVersions as a string',
        { allowUnsupportedVersions: 'yes' },
        /allowUnsupportedVersions: allowUnsupportedVersions must be a boolean/,
      ],
      ['connection as a string', { connection: 'redis://x' }, /connection: /],
      ['tracing as a string', { tracing: 'yes' }, /tracing: tracing must be a boolean/],
      ['cls without keys', { cls: {} }, /cls: cls must be \{ keys: \[\.\.\.\] \}/],
      ['cls with no key', { cls: { keys: [] } }, /cls: cls must be \{ keys/],
      ['cls with an empty key', { cls: { keys: [''] } }, /cls: cls must be \{ keys/],
      ['cls with a key twice', { cls: { keys: ['a', 'a'] } }, /cls: cls must be \{ keys/],
      ['cls with an unknown key', { cls: { keys: ['a'], ids: true } }, /cls: cls must be \{ keys/],
      [
        'metrics with a histogram that is not a function',
        { metrics: { gauge: () => undefined, histogram: 1 } },
        /metrics: metrics must be an object with gauge\(name, value, tags\?\) and optionally histogram/,
      ],
      [
        'connection.port as a string',
        { connection: { port: '6379' } },
        /connection: connection must be an ioredis options object/,
      ],
      ['connection.host as a number', { connection: { host: 1 } }, /connection: /],
      ['connection.db as a float', { connection: { db: 1.5 } }, /connection: /],
      ['queues as an array', { queues: ['a'] }, /queues: /],
      [
        'a queue name with a colon',
        { queues: { 'a:b': {} } },
        /queues: queues must be a record of queue names/,
      ],
      ['a queue with concurrency 0', { queues: { a: { concurrency: 0 } } }, /queues: /],
      ['a queue with concurrency 1.5', { queues: { a: { concurrency: 1.5 } } }, /queues: /],
      ['a queue with concurrency as a string', { queues: { a: { concurrency: '5' } } }, /queues: /],
      ['a queue with an unknown key', { queues: { a: { concurency: 5 } } }, /queues: /],
      ['a queue entry that is not an object', { queues: { a: 5 } }, /queues: /],
      ['a queue entry that is an array', { queues: { a: [] } }, /queues: /],
      ['housekeeping as a number', { housekeeping: 5 }, /housekeeping/],
      [
        'housekeeping.cron as a number',
        { housekeeping: { cron: 5 } },
        /housekeeping\.cron: cron must be a string/,
      ],
      [
        'housekeeping.enabled as a string',
        { housekeeping: { enabled: 'no' } },
        /housekeeping\.enabled: /,
      ],
      [
        'housekeeping.deleteCompletedWorkflowsAfter',
        { housekeeping: { deleteCompletedWorkflowsAfter: 'later' } },
        /housekeeping\.deleteCompletedWorkflowsAfter: .*duration/,
      ],
      [
        'housekeeping.stuckInProgressThreshold',
        { housekeeping: { stuckInProgressThreshold: -1 } },
        /housekeeping\.stuckInProgressThreshold: /,
      ],
      [
        'housekeeping.stuckScheduledThreshold',
        { housekeeping: { stuckScheduledThreshold: '15' } },
        /housekeeping\.stuckScheduledThreshold: /,
      ],
      [
        'housekeeping.stuckRecoveryAction',
        { housekeeping: { stuckRecoveryAction: 'skip' } },
        /housekeeping\.stuckRecoveryAction: /,
      ],
      ['housekeeping.batchSize 0', { housekeeping: { batchSize: 0 } }, /housekeeping\.batchSize: /],
      [
        'housekeeping.reconcileScheduledJobs',
        { housekeeping: { reconcileScheduledJobs: 'yes' } },
        /housekeeping\.reconcileScheduledJobs: /,
      ],
      [
        'maxCursorSize 0',
        { maxCursorSize: 0 },
        /maxCursorSize: maxCursorSize must not be less than 1/,
      ],
      ['maxCursorSize 1.5', { maxCursorSize: 1.5 }, /maxCursorSize: /],
      [
        'maxChainedSteps -1',
        { maxChainedSteps: -1 },
        /maxChainedSteps: maxChainedSteps must not be less than 0/,
      ],
      ['maxChainedSteps 2.5', { maxChainedSteps: 2.5 }, /maxChainedSteps: /],
      ['maxChainedSteps null', { maxChainedSteps: null }, /maxChainedSteps/],
      [
        'preparedStatements',
        { preparedStatements: 'yes' },
        /preparedStatements: preparedStatements must be a boolean/,
      ],
      ['maxSignalPayloadSize -1', { maxSignalPayloadSize: -1 }, /maxSignalPayloadSize: /],
      [
        'waitingVisibilityThreshold',
        { waitingVisibilityThreshold: 'later' },
        /waitingVisibilityThreshold: /,
      ],
      [
        'signalRetention words',
        { signalRetention: 'later' },
        /signalRetention: .*positive duration/,
      ],
      ['signalRetention 0', { signalRetention: 0 }, /signalRetention: .*positive duration/],
      [
        'errorReporter not a function',
        { errorReporter: 'console' },
        /errorReporter: errorReporter must be a function/,
      ],
      [
        'metrics without gauge',
        { metrics: { set: () => undefined } },
        /metrics: metrics must be an object with gauge/,
      ],
      [
        'logger missing methods',
        { logger: { log: () => undefined } },
        /logger: logger must be a Nest LoggerService/,
      ],
    ])('refuses %s', (_, options, pattern) => {
      const error = errorOf(options);
      expect(error.message).toMatch(pattern);
    });

    it('names every offending key at once', () => {
      const error = errorOf({
        prefix: 'a:b',
        maxCursorSize: 0,
        housekeeping: { cron: 5 },
        errorReporter: 1,
      });
      for (const key of ['prefix', 'maxCursorSize', 'housekeeping.cron', 'errorReporter']) {
        expect(error.message).toContain(`${key}:`);
      }
    });

    it('accepts Nest loggers, including class instances with prototype methods', () => {
      expect(resolveModuleOptions({ logger: new ConsoleLogger() }).logger).toBeInstanceOf(
        ConsoleLogger,
      );
      class Gauges {
        gauge(): void {}
      }
      expect(resolveModuleOptions({ metrics: new Gauges() }).metrics).toBeInstanceOf(Gauges);
    });

    it('resolves tracing and the cls keys', () => {
      const resolved = resolveModuleOptions({
        tracing: true,
        cls: { keys: ['requestId', 'tenant'] },
      });
      expect(resolved.tracing).toBe(true);
      expect(resolved.clsKeys).toEqual(['requestId', 'tenant']);
    });

    it('passes unknown connection keys through to ioredis unchecked', () => {
      const connection = {
        host: 'h',
        tls: { rejectUnauthorized: false },
        maxRetriesPerRequest: null,
      };
      expect(resolveModuleOptions(untyped({ connection })).connection).toEqual(connection);
    });

    it.each([null, 'options', 42, []])('refuses %p instead of an options object', (options) => {
      if (options === null) {
        // null is treated like "no options" by `?? {}`; only non-objects are refused.
        expect(resolveModuleOptions(options as unknown as undefined).prefix).toBe('geneva-drive');
        return;
      }
      expect(errorOf(options).message).toMatch(/expects an options object/);
    });
  });

  describe('an ioredis client as the connection', () => {
    // lazyConnect: the client never connects; only what the options code sees of it matters.
    const cluster = new Cluster([{ host: '127.0.0.1', port: 7101 }], { lazyConnect: true });
    const redis = new Redis({ lazyConnect: true });
    // No cast: the option's type takes an ioredis client (`npm run typecheck` fails otherwise).
    const asConnection: GenevaDriveModuleOptions['connection'] = cluster;
    afterAll(() => {
      cluster.disconnect();
      redis.disconnect();
    });

    it('Sentinel options (plain ioredis options) are passed on unchanged', () => {
      const sentinel = { sentinels: [{ host: '10.0.0.5', port: 26379 }], name: 'mymaster' };
      expect(resolveModuleOptions({ connection: sentinel }, 'forRoot()').connection).toEqual(
        sentinel,
      );
    });

    it('a Redis client is passed on as given too', () => {
      const options: GenevaDriveModuleOptions = { connection: redis };
      expect(resolveModuleOptions(options, 'forRoot()').connection).toBe(redis);
    });

    it('is passed on as given (not copied), with a hash-tagged prefix', () => {
      const resolved = resolveModuleOptions(
        { connection: asConnection, prefix: '{orders}' },
        'forRoot()',
      );
      expect(resolved.connection).toBe(cluster);
      expect(resolved.prefix).toBe('{orders}');
    });

    it('a Redis Cluster with a prefix that has no hash tag is refused, naming the fix', () => {
      expect(() =>
        resolveModuleOptions({ connection: asConnection, prefix: 'orders' }, 'forRoot()'),
      ).toThrow(
        new ModuleOptionsError(
          "forRoot(): the connection is a Redis Cluster, and the prefix 'orders' has no hash tag, so a queue's keys would land on different nodes (BullMQ's scripts then fail with CROSSSLOT). Put the prefix in braces: prefix: '{orders}'.",
        ),
      );
      expect(() => resolveModuleOptions({ connection: asConnection }, 'forRoot()')).toThrow(
        /prefix 'geneva-drive' has no hash tag.*prefix: '\{geneva-drive\}'/,
      );
    });
  });
  describe('GENEVA_DRIVE_WORKER (the CLI turns the worker off)', () => {
    const off = { GENEVA_DRIVE_WORKER: 'off' };

    it("'off' overrides worker: true and the default", () => {
      expect(resolveModuleOptions({ worker: true }, 'forRoot()', off).worker).toBe(false);
      expect(resolveModuleOptions({}, 'forRoot()', off).worker).toBe(false);
    });

    it('unset or empty follows the option', () => {
      expect(resolveModuleOptions({}, 'forRoot()', {}).worker).toBe(true);
      expect(resolveModuleOptions({}, 'forRoot()', { GENEVA_DRIVE_WORKER: '' }).worker).toBe(true);
      expect(resolveModuleOptions({ worker: false }, 'forRoot()', {}).worker).toBe(false);
    });

    it('any other value is refused, naming the one it takes', () => {
      expect(() => resolveModuleOptions({}, 'forRoot()', { GENEVA_DRIVE_WORKER: 'false' })).toThrow(
        new ModuleOptionsError(
          "GENEVA_DRIVE_WORKER is 'false', but the only value it takes is 'off' (no worker in this process, whatever the worker option says). Unset it to follow the option.",
        ),
      );
    });

    it("transport 'local' is refused with it, saying why and what to do", () => {
      expect(() => resolveModuleOptions({ transport: 'local' }, 'forRoot()', off)).toThrow(
        /forRoot\(\): transport 'local' runs steps in this process only, so it cannot run with GENEVA_DRIVE_WORKER=off \(set by the geneva-drive CLI\).*switch it to transport 'redis'/,
      );
    });
  });
});
