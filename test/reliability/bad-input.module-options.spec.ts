import { randomBytes } from 'node:crypto';
import { Injectable, type DynamicModule } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import IORedis from 'ioredis';
import { GenevaDriveModule, ModuleOptionsError, type GenevaDriveModuleOptions } from '../../lib';
import { CheckLog } from './support/bad-input.support';

/**
 * Issue #9 item 6, "Bad input" for module options: `GenevaDriveModule.forRoot(options)` and
 * `forRootAsync(...)` fed wrong types, unknown keys, out-of-range numbers and bad durations. The
 * arguments of `forRoot`/`forRootAsync` themselves are refused when they are called; the options
 * when the module is compiled, before any provider uses them. Each is a `ModuleOptionsError`
 * naming the offending key, and nothing reaches Redis: no key exists under the case's prefix.
 */
const log = new CheckLog('bad module options');

let redis: IORedis;
beforeAll(() => {
  redis = new IORedis({ host: '127.0.0.1', port: 6379, lazyConnect: true });
});
afterAll(async () => {
  log.print();
  await redis.quit();
});

/** A prefix of the case's own, so leftover Redis keys would be visible. */
const freshPrefix = () => `gd-bad-${randomBytes(4).toString('hex')}`;

/** Compiles a testing module importing `module`; resolves the error it fails with. */
async function compileError(module: () => DynamicModule): Promise<unknown> {
  try {
    const moduleRef = await Test.createTestingModule({ imports: [module()] }).compile();
    await moduleRef.close();
    return null;
  } catch (error) {
    return error;
  }
}

/** `forRoot` options: each is refused at compile time, naming the key. */
const FOR_ROOT: Array<[string, Record<string, unknown>, RegExp]> = [
  ['a misspelt key (prefx)', { prefx: 'x' }, /prefx is not a known option/],
  ['the key constructor', { constructor: 1 }, /constructor is not a known option/],
  [
    'the key __proto__ (as JSON.parse makes it)',
    JSON.parse('{"__proto__": {"worker": false}}') as Record<string, unknown>,
    /__proto__ is not a known option/,
  ],
  [
    'connection as a URL string',
    { connection: 'redis://localhost' },
    /connection: connection must be an object/,
  ],
  ['connection null', { connection: null }, /connection: connection must be an object/],
  [
    'connection.port as a string',
    { connection: { port: '6379' } },
    /connection must be an ioredis options object/,
  ],
  ['connection.port 70000', { connection: { port: 70_000 } }, /port: an integer 0\.\.65535/],
  [
    'connection.host as a number',
    { connection: { host: 127 } },
    /connection must be an ioredis options object/,
  ],
  ['prefix with ":"', { prefix: 'a:b' }, /prefix: prefix must not contain ":"/],
  ['prefix ""', { prefix: '' }, /prefix: prefix must not contain ":" and must not be empty/],
  ['prefix as a number', { prefix: 7 }, /prefix: prefix must be a string/],
  ['dataSource ""', { dataSource: '' }, /dataSource must name a TypeORM data source/],
  ['dataSource as a number', { dataSource: 1 }, /dataSource: dataSource must be a string/],
  [
    'queues as a string',
    { queues: 'geneva-drive' },
    /queues: queues must be a record of queue names/,
  ],
  [
    'queues with a ":" name',
    { queues: { 'a:b': {} } },
    /queues must be a record of queue names \(no ':'\)/,
  ],
  [
    'queues with concurrency 0',
    { queues: { q: { concurrency: 0 } } },
    /concurrency\?: positive integer/,
  ],
  [
    'queues with concurrency "5"',
    { queues: { q: { concurrency: '5' } } },
    /concurrency\?: positive integer/,
  ],
  [
    'queues with an unknown per-queue key',
    { queues: { q: { concurency: 5 } } },
    /queues: queues must be a record/,
  ],
  ['queues with a null entry', { queues: { q: null } }, /queues: queues must be a record/],
  [
    'defaultQueue with ":"',
    { defaultQueue: 'x:y' },
    /defaultQueue: defaultQueue must not contain ":"/,
  ],
  ['worker "yes"', { worker: 'yes' }, /worker: worker must be a boolean/],
  ['worker null', { worker: null }, /worker: worker must be a boolean/],
  [
    'enqueueAfterCommit 1',
    { enqueueAfterCommit: 1 },
    /enqueueAfterCommit: enqueueAfterCommit must be a boolean/,
  ],
  [
    'housekeeping "off"',
    { housekeeping: 'off' },
    /housekeeping: housekeeping must be an options object/,
  ],
  ['housekeeping []', { housekeeping: [] }, /housekeeping: housekeeping must be an options object/],
  ['housekeeping null', { housekeeping: null }, /housekeeping must be an options object/],
  [
    'housekeeping with a misspelt key',
    { housekeeping: { enabeld: false } },
    /housekeeping.enabeld is not a known option/,
  ],
  [
    'housekeeping.enabled "no"',
    { housekeeping: { enabled: 'no' } },
    /housekeeping.enabled: enabled must be a boolean/,
  ],
  [
    'housekeeping.cron 5',
    { housekeeping: { cron: 5 } },
    /housekeeping.cron: cron must be a string/,
  ],
  [
    'housekeeping.deleteCompletedWorkflowsAfter "a month"',
    { housekeeping: { deleteCompletedWorkflowsAfter: 'a month' } },
    /deleteCompletedWorkflowsAfter must be a duration/,
  ],
  [
    'housekeeping.stuckInProgressThreshold -1',
    { housekeeping: { stuckInProgressThreshold: -1 } },
    /stuckInProgressThreshold must be a duration/,
  ],
  [
    'housekeeping.stuckScheduledThreshold NaN',
    { housekeeping: { stuckScheduledThreshold: NaN } },
    /stuckScheduledThreshold must be a duration/,
  ],
  [
    'housekeeping.stuckRecoveryAction "retry"',
    { housekeeping: { stuckRecoveryAction: 'retry' } },
    /stuckRecoveryAction must be one of the following values: reattempt, cancel/,
  ],
  [
    'housekeeping.batchSize 0',
    { housekeeping: { batchSize: 0 } },
    /batchSize must not be less than 1/,
  ],
  [
    'housekeeping.batchSize 2.5',
    { housekeeping: { batchSize: 2.5 } },
    /batchSize must be an integer/,
  ],
  ['maxCursorSize 0', { maxCursorSize: 0 }, /maxCursorSize must not be less than 1/],
  ['maxCursorSize "128kb"', { maxCursorSize: '128kb' }, /maxCursorSize must be an integer/],
  ['maxCursorSize Infinity', { maxCursorSize: Infinity }, /maxCursorSize must be an integer/],
  [
    'maxSignalPayloadSize -1',
    { maxSignalPayloadSize: -1 },
    /maxSignalPayloadSize must not be less than 1/,
  ],
  [
    'maxSignalPayloadSize 1.5',
    { maxSignalPayloadSize: 1.5 },
    /maxSignalPayloadSize must be an integer/,
  ],
  [
    'waitingVisibilityThreshold "a week"',
    { waitingVisibilityThreshold: 'a week' },
    /waitingVisibilityThreshold must be a duration/,
  ],
  ['errorReporter as a string', { errorReporter: 'console' }, /errorReporter must be a function/],
  [
    'metrics without gauge()',
    { metrics: { count: () => undefined } },
    /metrics must be an object with gauge/,
  ],
  [
    'logger without warn()',
    { logger: { log: () => undefined, error: () => undefined } },
    /logger must be a Nest LoggerService/,
  ],
  [
    'several at once',
    { prefix: 'a:b', piority: 3, worker: 'yes' },
    /^(?=.*piority is not a known option)(?=.*prefix: )(?=.*worker: )/,
  ],
];

@Injectable()
class OptionsFactory {
  create(): GenevaDriveModuleOptions {
    return { worker: 'yes' as never };
  }
}

describe('GenevaDriveModule.forRoot(options): ModuleOptionsError at compile, nothing in Redis', () => {
  it.each(FOR_ROOT)('%s', async (name, options, message) => {
    const prefix = freshPrefix();
    // forRoot() itself may refuse the argument (an own __proto__ key); compileError catches both.
    const error = await compileError(() =>
      GenevaDriveModule.forRoot({ prefix, housekeeping: { enabled: false }, ...options }),
    );
    log.record(
      'forRoot',
      name,
      error instanceof Error ? `${error.name}: ${error.message}` : 'compiled',
    );
    expect(error).toBeInstanceOf(ModuleOptionsError);
    expect((error as Error).message).toMatch(message);
    expect(await redis.keys(`${prefix}*`)).toEqual([]);
  });

  it.each([
    ['null', null],
    ['a string', 'geneva'],
    ['an array', []],
    ['a number', 42],
  ] as Array<[string, unknown]>)(
    'forRoot(%s) → ModuleOptionsError when called',
    (name, argument) => {
      let thrown: unknown;
      try {
        // The string, array and number reach the options factory; null is refused on the spot.
        GenevaDriveModule.forRoot(argument as GenevaDriveModuleOptions);
      } catch (error) {
        thrown = error;
      }
      if (thrown === undefined) return expectCompileRefusal(name, argument);
      log.record(
        'forRoot(argument)',
        name,
        `${(thrown as Error).name}: ${(thrown as Error).message}`,
      );
      expect(thrown).toBeInstanceOf(ModuleOptionsError);
      expect((thrown as Error).message).toMatch(/forRoot\(\) expects an options object/);
    },
  );

  async function expectCompileRefusal(name: string, argument: unknown): Promise<void> {
    const error = await compileError(() =>
      GenevaDriveModule.forRoot(argument as GenevaDriveModuleOptions),
    );
    log.record(
      'forRoot(argument)',
      name,
      error instanceof Error ? `${error.name}: ${error.message}` : 'compiled',
    );
    expect(error).toBeInstanceOf(ModuleOptionsError);
    expect((error as Error).message).toMatch(/forRoot\(\) expects an options object/);
  }
});

describe('GenevaDriveModule.forRootAsync(...): ModuleOptionsError, nothing in Redis', () => {
  const AT_CALL: Array<[string, unknown, RegExp]> = [
    ['undefined', undefined, /forRootAsync\(\) expects \{ useFactory/],
    ['null', null, /forRootAsync\(\) expects \{ useFactory/],
    ['a factory function instead of options', () => ({}), /forRootAsync\(\) expects \{ useFactory/],
    ['no factory', {}, /one of useFactory, useClass or useExisting is required/],
    ['useFactory as an object', { useFactory: { worker: false } }, /useFactory must be a function/],
    [
      'useFactory and useClass',
      { useFactory: () => ({}), useClass: OptionsFactory },
      /give only one of useFactory, useClass/,
    ],
    ['useClass as a string', { useClass: 'OptionsFactory' }, /useClass must be a class/],
    [
      'inject not an array',
      { useFactory: () => ({}), inject: 'CONFIG' },
      /inject must be an array/,
    ],
    ['imports not an array', { useFactory: () => ({}), imports: {} }, /imports must be an array/],
    ['isGlobal "yes"', { useFactory: () => ({}), isGlobal: 'yes' }, /isGlobal must be a boolean/],
    ['a misspelt key (useFactroy)', { useFactroy: () => ({}) }, /useFactroy is not a known option/],
    [
      'options meant for forRoot',
      { useFactory: () => ({}), prefix: 'x' },
      /prefix is not a known option/,
    ],
    [
      'synchronous queues as a string',
      { useFactory: () => ({}), queues: 'fast' },
      /queues: queues must be a record of queue names/,
    ],
    [
      'synchronous queues with a ":" name',
      { useFactory: () => ({}), queues: { 'a:b': {} } },
      /queues must be a record/,
    ],
  ];

  it.each(AT_CALL)(
    'forRootAsync(%s) → ModuleOptionsError when called',
    (name, argument, message) => {
      let thrown: unknown;
      try {
        GenevaDriveModule.forRootAsync(argument as never);
      } catch (error) {
        thrown = error;
      }
      log.record(
        'forRootAsync(argument)',
        name,
        thrown instanceof Error ? `${thrown.name}: ${thrown.message}` : 'accepted',
      );
      expect(thrown).toBeInstanceOf(ModuleOptionsError);
      expect((thrown as Error).message).toMatch(message);
    },
  );

  const AT_COMPILE: Array<[string, (prefix: string) => DynamicModule, RegExp]> = [
    [
      'a factory returning undefined',
      () => GenevaDriveModule.forRootAsync({ useFactory: () => undefined as never }),
      /the options factory returned undefined/,
    ],
    [
      'a factory returning null',
      () => GenevaDriveModule.forRootAsync({ useFactory: () => null as never }),
      /the options factory returned null/,
    ],
    [
      'a factory returning a string',
      () => GenevaDriveModule.forRootAsync({ useFactory: () => 'redis://x' as never }),
      /forRootAsync\(\) expects an options object/,
    ],
    [
      'a factory resolving bad options',
      (prefix) =>
        GenevaDriveModule.forRootAsync({
          useFactory: () => Promise.resolve({ prefix, defaultQueue: 'x:y' }),
        }),
      /defaultQueue must not contain ":"/,
    ],
    [
      'a factory returning an unknown key',
      (prefix) =>
        GenevaDriveModule.forRootAsync({ useFactory: () => ({ prefix, piority: 1 }) as never }),
      /piority is not a known option/,
    ],
    [
      'a factory returning queues that differ from the synchronous ones',
      (prefix) =>
        GenevaDriveModule.forRootAsync({
          queues: { fast: {} },
          useFactory: () => ({ prefix, queues: { slow: {} } }),
        }),
      /queues must be known before the options factory runs/,
    ],
    [
      'a useClass factory returning bad options',
      () => GenevaDriveModule.forRootAsync({ useClass: OptionsFactory }),
      /worker: worker must be a boolean/,
    ],
  ];

  it.each(AT_COMPILE)('%s → ModuleOptionsError at compile', async (name, module, message) => {
    const prefix = freshPrefix();
    const error = await compileError(() => module(prefix));
    log.record(
      'forRootAsync(factory)',
      name,
      error instanceof Error ? `${error.name}: ${error.message}` : 'compiled',
    );
    expect(error).toBeInstanceOf(ModuleOptionsError);
    expect((error as Error).message).toMatch(message);
    expect(await redis.keys(`${prefix}*`)).toEqual([]);
  });
});
