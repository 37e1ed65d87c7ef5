import { DataSource } from 'typeorm';
import {
  InvalidArgumentError,
  InvalidStateError,
  SignalPayloadTooLargeError,
  StepConfigurationError,
  StepNotDefinedError,
  WorkflowNotFoundError,
  WorkflowNotOngoingError,
  type WorkflowEntity,
  type WorkflowService,
} from '../../lib';
import { connectionOptions, testDatabaseLabel } from '../e2e/support/database';
import { EngineHarness } from '../e2e/support/engine-harness';
import { Order } from '../fixtures/order.entity';
import { Subscriber } from '../fixtures/subscriber.entity';
import {
  AnyHeroWorkflow,
  CheckLog,
  Coupon,
  CouponWorkflow,
  IdleOrderWorkflow,
  MALFORMED_IDS,
  NOT_WORKFLOW_LIKE,
  NothingToDoWorkflow,
  ParkedOrderWorkflow,
  Voucher,
  VoucherWorkflow,
  circular,
  deeplyNested,
  rejectionOf,
  writeSnapshot,
  type BadCall,
  type ErrorClass,
} from './support/bad-input.support';

/**
 * Issue #9 item 6, "Bad input": every public entry point of WorkflowService fed wrong types,
 * oversized values, unknown keys, unknown and malformed ids. Each call must reject (never throw
 * synchronously) with the library's typed error naming the problem, and write nothing: the row
 * counts and newest `updated_at` of the three tables and the BullMQ job ids are compared before
 * and after every case.
 */
const MAX_PAYLOAD = 4096;

/**
 * SPEC §16.1: Dates outside years 1–9999, and values JSON would store as something else (boxed
 * NaN, an object without own fields), refused wherever JSON is expected. Each row's message
 * follows the value's path.
 */
const OUT_OF_RANGE_VALUES: Array<[label: string, value: unknown, message: RegExp]> = [
  [
    'a Date after 9999',
    new Date(Date.parse('9999-12-31T23:59:59.999Z') + 1),
    /is Date\(\+010000-01-01T00:00:00\.000Z\), outside years 1–9999: the library stores dates from 0001-01-01 to 9999-12-31 \(UTC\) only/,
  ],
  [
    'a Date in year 0',
    new Date('0000-06-01T00:00:00.000Z'),
    /is Date\(0000-06-01T00:00:00\.000Z\), outside years 1–9999/,
  ],
  [
    'a Date BC',
    new Date('-002000-01-01T00:00:00.000Z'),
    /is Date\(-002000-01-01T00:00:00\.000Z\), outside years 1–9999/,
  ],
  ['a boxed NaN', new Number(NaN), /is NaN, which JSON cannot represent/],
  ['a boxed BigInt', Object(5n), /is a BigInt \(5n\)/],
  ['a WeakRef', new WeakRef({}), /is a WeakRef, which JSON cannot represent/],
  [
    'a URLSearchParams',
    new URLSearchParams('a=1'),
    /is a URLSearchParams instance without a single own enumerable field, which JSON would store as \{\}/,
  ],
];
const log = new CheckLog(`bad input to WorkflowService (${testDatabaseLabel} + BullMQ)`);

/** A class that is not a workflow. */
class NotAWorkflow {}

describe(`bad input to WorkflowService: typed errors, nothing written (${testDatabaseLabel} + BullMQ)`, () => {
  let harness: EngineHarness;
  let service: WorkflowService;
  /** Workflows in each state the cases need; filled in beforeAll. */
  const seeds = {} as Record<'ready' | 'paused' | 'parked' | 'finished', WorkflowEntity>;
  const orders = {} as Record<'saved' | 'spare', Order>;
  let subscriber: Subscriber;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [
        IdleOrderWorkflow,
        ParkedOrderWorkflow,
        NothingToDoWorkflow,
        AnyHeroWorkflow,
        VoucherWorkflow,
        CouponWorkflow,
      ],
      entities: [Order, Subscriber, Voucher, Coupon],
      options: { maxSignalPayloadSize: MAX_PAYLOAD },
    });
    service = harness.service;
    const newOrder = () => harness.dataSource.getRepository(Order).save({ status: 'new' });
    orders.saved = await newOrder();
    orders.spare = await newOrder();
    const subscribers = harness.dataSource.getRepository(Subscriber);
    // An entity instance (save() of a plain object returns that plain object).
    subscriber = await subscribers.save(subscribers.create({ email: 'bad-input@example.com' }));
    seeds.ready = await service.start(IdleOrderWorkflow, { hero: orders.saved });
    seeds.paused = await service.pause(
      await service.start(IdleOrderWorkflow, { hero: await newOrder() }),
    );
    seeds.parked = await service.start(ParkedOrderWorkflow, { hero: await newOrder() });
    seeds.finished = await service.start(NothingToDoWorkflow);
    // Let the parked step's job run and settle, so the snapshot only moves if a case writes.
    await harness.waitForWorkflow(
      seeds.parked.id,
      async () => (await service.currentExecution(seeds.parked))?.state === 'waiting',
    );
    const queue = harness.queue();
    for (let i = 0; i < 200; i++) {
      const counts = await queue.getJobCounts('active', 'waiting', 'prioritized');
      if (Object.values(counts).every((count) => count === 0)) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  });

  afterAll(async () => {
    log.print();
    await harness?.close();
  });

  /** The case must reject with `error` matching `message`, and write nothing. */
  async function expectRejectedWithoutWrites(
    group: string,
    { name, call, error, message }: BadCall,
  ): Promise<void> {
    const before = await writeSnapshot(harness.dataSource, [harness.queue()]);
    const thrown = await rejectionOf(call);
    log.record(group, name, `${thrown.name}: ${thrown.message}`);
    expect(thrown).toBeInstanceOf(error);
    expect(thrown.message).toMatch(message);
    expect(await writeSnapshot(harness.dataSource, [harness.queue()])).toEqual(before);
  }

  const bad = (name: string, call: () => unknown, error: ErrorClass, message: RegExp): BadCall => ({
    name,
    call,
    error,
    message,
  });

  // ───────────────────────────── Ids of every WorkflowLike entry point ─────────────────────────────

  /** Every entry point taking a WorkflowLike, called with valid other arguments. */
  const WORKFLOW_LIKE_ENTRY_POINTS: Array<[string, (w: unknown) => unknown]> = [
    ['signal', (w) => service.signal(w as string, 'go')],
    ['pause', (w) => service.pause(w as string)],
    ['resume', (w) => service.resume(w as string)],
    ['resumeAt', (w) => service.resumeAt(w as string, 'after')],
    ['skip', (w) => service.skip(w as string)],
    ['cancel', (w) => service.cancel(w as string)],
    ['setStepJobOptions', (w) => service.setStepJobOptions(w as string, { priority: 5 })],
    ['executionHistory', (w) => service.executionHistory(w as string)],
    ['currentExecution', (w) => service.currentExecution(w as string)],
    ['signals', (w) => service.signals(w as string)],
    ['previousStepName', (w) => service.previousStepName(w as string)],
  ];

  describe.each(WORKFLOW_LIKE_ENTRY_POINTS)('%s(workflow, …)', (method, invoke) => {
    it.each(MALFORMED_IDS)(
      `${method}() with a malformed or unknown id (%s) → WorkflowNotFoundError`,
      async (label, id) => {
        await expectRejectedWithoutWrites(
          `${method}(id)`,
          bad(label, () => invoke(id), WorkflowNotFoundError, /No workflow with id/),
        );
      },
    );

    it.each(MALFORMED_IDS)(
      `${method}() with an entity whose id is malformed or unknown (%s) → WorkflowNotFoundError`,
      async (label, id) => {
        await expectRejectedWithoutWrites(
          `${method}(entity)`,
          bad(label, () => invoke({ id }), WorkflowNotFoundError, /No workflow with id/),
        );
      },
    );

    it.each(NOT_WORKFLOW_LIKE)(
      `${method}() with %s instead of a workflow → InvalidArgumentError`,
      async (label, value) => {
        await expectRejectedWithoutWrites(
          `${method}(value)`,
          bad(
            label,
            () => invoke(value),
            InvalidArgumentError,
            new RegExp(`${method}\\(\\) takes a WorkflowEntity or a workflow id string`),
          ),
        );
      },
    );
  });

  describe('find(id)', () => {
    it.each(MALFORMED_IDS)(
      'find() with a malformed or unknown id (%s) resolves null and writes nothing',
      async (label, id) => {
        const before = await writeSnapshot(harness.dataSource, [harness.queue()]);
        await expect(service.find(id)).resolves.toBeNull();
        expect(await writeSnapshot(harness.dataSource, [harness.queue()])).toEqual(before);
        log.record('find(id)', label, 'null');
      },
    );

    it.each(NOT_WORKFLOW_LIKE)(
      'find() with %s instead of an id string → InvalidArgumentError',
      async (label, value) => {
        await expectRejectedWithoutWrites(
          'find(value)',
          bad(
            label,
            () => service.find(value as string),
            InvalidArgumentError,
            /find\(\) takes a workflow id string/,
          ),
        );
      },
    );
  });

  // ───────────────────────────── start() ─────────────────────────────

  describe('start(workflow, opts)', () => {
    const refs: BadCall[] = [
      bad(
        'an unregistered name',
        () => service.start('Nope'),
        StepConfigurationError,
        /No workflow registered as 'Nope'/,
      ),
      bad(
        'a SQL-looking name',
        () => service.start("x'; DROP TABLE geneva_drive_workflows; --"),
        StepConfigurationError,
        /No workflow registered as 'x'; DROP/,
      ),
      bad(
        'an empty name',
        () => service.start(''),
        StepConfigurationError,
        /No workflow registered as ''/,
      ),
      bad(
        'a name with a NUL byte',
        () => service.start('nothing-to-do\u0000'),
        StepConfigurationError,
        /No workflow registered as 'nothing-to-do\\u0000'/,
      ),
      bad(
        'a name with a lone surrogate',
        () => service.start('\uD800'),
        StepConfigurationError,
        /No workflow registered as '\\ud800'/,
      ),
      bad(
        'a 1 MB name',
        () => service.start('w'.repeat(1_000_000)),
        StepConfigurationError,
        /No workflow registered as 'w+…' \(1000000 UTF-16 units\)/,
      ),
      bad(
        'the class name of a workflow registered under another name',
        () => service.start('NothingToDoWorkflow'),
        StepConfigurationError,
        /No workflow registered as 'NothingToDoWorkflow'/,
      ),
      bad(
        'a class that is not a @Workflow',
        () => service.start(NotAWorkflow),
        StepConfigurationError,
        /No workflow registered as 'NotAWorkflow'/,
      ),
      bad(
        'an entity class',
        () => service.start(Order),
        StepConfigurationError,
        /No workflow registered as 'Order'/,
      ),
      ...(
        [
          ['undefined', undefined],
          ['null', null],
          ['a number', 42],
          ['an object', {}],
          ['an array', [IdleOrderWorkflow]],
          ['a workflow instance', new NothingToDoWorkflow()],
        ] as Array<[string, unknown]>
      ).map(([label, ref]) =>
        bad(
          label,
          () => service.start(ref as string),
          InvalidArgumentError,
          /start\(\) takes a @Workflow class or its registered name/,
        ),
      ),
    ];

    const options: BadCall[] = [
      bad(
        'options as a string',
        () => service.start(IdleOrderWorkflow, 'fast' as never),
        InvalidArgumentError,
        /start\(\) expects an options object/,
      ),
      bad(
        'options as an array',
        () => service.start(IdleOrderWorkflow, [] as never),
        InvalidArgumentError,
        /start\(\) expects an options object/,
      ),
      bad(
        'options null',
        () => service.start(IdleOrderWorkflow, null as never),
        InvalidArgumentError,
        /start\(\) expects an options object/,
      ),
      bad(
        'a misspelt key (heroo)',
        () => service.start(IdleOrderWorkflow, { heroo: orders.spare } as never),
        InvalidArgumentError,
        /unknown option\(s\) heroo/,
      ),
      bad(
        'allowMultiple: "yes"',
        () =>
          service.start(IdleOrderWorkflow, { hero: orders.spare, allowMultiple: 'yes' as never }),
        InvalidArgumentError,
        /allowMultiple must be a boolean, but was 'yes'/,
      ),
      bad(
        'allowMultiple: 1',
        () => service.start(IdleOrderWorkflow, { hero: orders.spare, allowMultiple: 1 as never }),
        InvalidArgumentError,
        /allowMultiple must be a boolean/,
      ),
      bad(
        'allowMultiple: null',
        () =>
          service.start(IdleOrderWorkflow, { hero: orders.spare, allowMultiple: null as never }),
        InvalidArgumentError,
        /allowMultiple must be a boolean/,
      ),
      bad(
        'manager: an empty object',
        () => service.start(IdleOrderWorkflow, { hero: orders.spare, manager: {} as never }),
        InvalidArgumentError,
        /manager option belongs to another DataSource/,
      ),
      bad(
        'manager: a string',
        () => service.start(IdleOrderWorkflow, { hero: orders.spare, manager: 'tx' as never }),
        InvalidArgumentError,
        /manager option/,
      ),
      bad(
        'manager of another DataSource',
        () =>
          service.start(IdleOrderWorkflow, {
            hero: orders.spare,
            manager: new DataSource(connectionOptions(harness.schema)).manager,
          }),
        InvalidArgumentError,
        /manager option belongs to another DataSource/,
      ),
    ];

    const heroes: BadCall[] = [
      ...(
        [
          ['0', 0],
          ['an empty string', ''],
          ['false', false],
          ['a string id', '42'],
          ['a number id', 42],
          ['an array', [orders.saved]],
          ['a function', () => orders.saved],
          ['a symbol', Symbol('hero')],
        ] as Array<[string, unknown]>
      ).map(([label, hero]) =>
        bad(
          `hero: ${label}`,
          () => service.start(IdleOrderWorkflow, { hero: hero as object }),
          InvalidArgumentError,
          /start\(\) hero must be an entity instance/,
        ),
      ),
      bad(
        'hero: an unsaved entity',
        () => service.start(IdleOrderWorkflow, { hero: new Order() }),
        InvalidArgumentError,
        /has no primary key value yet/,
      ),
      bad(
        'hero: an entity of another class than declared',
        () => service.start(IdleOrderWorkflow, { hero: subscriber }),
        InvalidArgumentError,
        /got a Subscriber as hero, but IdleOrderWorkflow declares hero: \(\) => Order/,
      ),
      bad(
        'hero: { id: "abc" } for an integer key',
        () => service.start(IdleOrderWorkflow, { hero: { id: 'abc' } }),
        InvalidArgumentError,
        /must be an integer .* but was 'abc'/,
      ),
      bad(
        'hero: { id: 1.5 } for an integer key',
        () => service.start(IdleOrderWorkflow, { hero: { id: 1.5 } }),
        InvalidArgumentError,
        /must be an integer/,
      ),
      bad(
        'hero: { id: NaN }',
        () => service.start(IdleOrderWorkflow, { hero: { id: NaN } }),
        InvalidArgumentError,
        /primary key \(id\) that is NaN/,
      ),
      bad(
        'hero: { id: Infinity }',
        () => service.start(IdleOrderWorkflow, { hero: { id: Infinity } }),
        InvalidArgumentError,
        /is Infinity/,
      ),
      bad(
        'hero: { id: {} }',
        () => service.start(IdleOrderWorkflow, { hero: { id: {} } }),
        InvalidArgumentError,
        /not a string or number/,
      ),
      bad(
        'hero: { id: "1; DROP TABLE test_orders" }',
        () => service.start(IdleOrderWorkflow, { hero: { id: '1; DROP TABLE test_orders' } }),
        InvalidArgumentError,
        /must be an integer/,
      ),
      bad(
        'hero: a plain object for a workflow without a declared hero',
        () => service.start(AnyHeroWorkflow, { hero: { id: 1 } }),
        InvalidArgumentError,
        /Cannot tell the hero's entity/,
      ),
      bad(
        'hero: { id: "nope" } for a uuid key',
        () => service.start(VoucherWorkflow, { hero: { id: 'nope' } }),
        InvalidArgumentError,
        /must be a UUID/,
      ),
      bad(
        'hero: a 256-character string key',
        () => service.start(CouponWorkflow, { hero: { code: 'c'.repeat(256) } }),
        InvalidArgumentError,
        /is 256 characters long, over the limit of 255/,
      ),
      bad(
        'hero: a string key with a NUL byte',
        () => service.start(CouponWorkflow, { hero: { code: 'a\u0000b' } }),
        InvalidArgumentError,
        /contains a NUL character/,
      ),
      bad(
        'hero: { id: 2 ** 53 } (no longer exact)',
        () => service.start(IdleOrderWorkflow, { hero: { id: 2 ** 53 } }),
        InvalidArgumentError,
        /primary key \(id\) that is 9007199254740992, an integer beyond Number\.MAX_SAFE_INTEGER, so it is no longer exact/,
      ),
      bad(
        'hero: a string key with a lone surrogate',
        () => service.start(CouponWorkflow, { hero: { code: 'a\uDC00' } }),
        InvalidArgumentError,
        /lone UTF-16 surrogate/,
      ),
    ];

    const metadata: BadCall[] = (
      [
        ['a string', 'note', /metadata must be a plain object .* but was 'note'/],
        ['a number', 7, /metadata must be a plain object/],
        ['an array', [1, 2], /metadata must be a plain object .* an array/],
        ['a Date', new Date(), /metadata must be a plain object .* Date\(/],
        ['a Map', new Map([['a', 1]]), /metadata must be a plain object .* a Map instance/],
        ['an entity instance', new Order(), /metadata must be a plain object .* an Order instance/],
        [
          'the reserved key stepJobOptions',
          { stepJobOptions: { piority: 1 } },
          /metadata.stepJobOptions is reserved/,
        ],
        ['a BigInt value', { amount: 10n }, /metadata.amount is a BigInt/],
        ['a circular reference', circular(), /metadata.self is a circular reference to metadata/],
        ['a function value', { callback: () => 1 }, /metadata.callback is a function/],
        ['a symbol value', { tag: Symbol('t') }, /metadata.tag is a symbol/],
        ['NaN', { ratio: NaN }, /metadata.ratio is NaN/],
        ['-Infinity', { ratio: -Infinity }, /metadata.ratio is -Infinity/],
        ['an undefined array element', { list: [1, undefined] }, /metadata.list\[1\] is undefined/],
        ['an Invalid Date', { at: new Date('nope') }, /metadata.at is an Invalid Date/],
        ['a nested Set', { deep: { tags: new Set(['a']) } }, /metadata.deep.tags is a Set/],
        ['an Error', { failure: new Error('x') }, /metadata.failure is an Error/],
        ['a Buffer', { raw: Buffer.from('x') }, /metadata.raw is a Buffer/],
        [
          'a lone surrogate in a string',
          { note: '\uDBFF' },
          /metadata.note contains a lone UTF-16 surrogate/,
        ],
        ['nesting 100 000 levels deep', { deep: deeplyNested(100_000) }, /nested too deeply/],
        ...OUT_OF_RANGE_VALUES.map(([label, value, message]): [string, unknown, RegExp] => [
          label,
          { value },
          new RegExp(`metadata\\.value ${message.source}`),
        ]),
      ] as Array<[string, unknown, RegExp]>
    ).map(([label, value, message]) =>
      bad(
        `metadata: ${label}`,
        () =>
          service.start(IdleOrderWorkflow, {
            hero: orders.spare,
            metadata: value as Record<string, unknown>,
          }),
        InvalidArgumentError,
        message,
      ),
    );

    const jobOptions: BadCall[] = (
      [
        ['a string', 'fast', /must be an object/],
        ['an array', [], /must be an object/],
        ['a misspelt key (piority)', { piority: 1 }, /unknown job option key\(s\): piority/],
        ['priority 0', { priority: 0 }, /priority: 0/],
        ['priority 1.5', { priority: 1.5 }, /priority: 1.5/],
        ['priority "1"', { priority: '1' }, /priority: '1'/],
        ['priority over 2097151', { priority: 2_097_152 }, /priority: 2097152/],
        ['a queue with ":"', { queue: 'a:b' }, /queue: 'a:b'/],
        ['an empty queue', { queue: '' }, /queue: ''/],
        ['wait "later"', { wait: 'later' }, /wait: 'later'/],
        ['wait -1', { wait: -1 }, /wait: -1/],
        ['waitUntil a string', { waitUntil: '2030-01-01' }, /waitUntil: '2030-01-01'/],
        ['waitUntil an Invalid Date', { waitUntil: new Date('nope') }, /waitUntil: Invalid Date/],
      ] as Array<[string, unknown, RegExp]>
    ).map(([label, value, message]) =>
      bad(
        `stepJobOptions: ${label}`,
        () =>
          service.start(IdleOrderWorkflow, { hero: orders.spare, stepJobOptions: value as never }),
        StepConfigurationError,
        new RegExp(`IdleOrderWorkflow instance stepJobOptions \\(start\\).*${message.source}`),
      ),
    );

    it.each(refs)('workflow: $name → $error.name', (c) =>
      expectRejectedWithoutWrites('start(workflow)', c),
    );
    it.each(options)('$name → $error.name', (c) => expectRejectedWithoutWrites('start(opts)', c));
    it.each(heroes)('$name → $error.name', (c) => expectRejectedWithoutWrites('start(hero)', c));
    it.each(metadata)('$name → $error.name', (c) =>
      expectRejectedWithoutWrites('start(metadata)', c),
    );
    it.each(jobOptions)('$name → $error.name', (c) =>
      expectRejectedWithoutWrites('start(stepJobOptions)', c),
    );
  });

  // ───────────────────────────── signal() ─────────────────────────────

  describe('signal(workflow, name, opts)', () => {
    const to = () => seeds.parked;
    const names: BadCall[] = (
      [
        ['an empty name', '', /needs a non-blank signal name/],
        ['a blank name', '   ', /needs a non-blank signal name/],
        ['a number', 42, /needs a non-blank signal name, .* but got 42/],
        ['null', null, /needs a non-blank signal name/],
        ['undefined', undefined, /needs a non-blank signal name/],
        ['an object', { name: 'go' }, /needs a non-blank signal name/],
        [
          'a 256-character name',
          'n'.repeat(256),
          /name is 256 characters long, over the limit of 255/,
        ],
        ['a 1 MB name', 'n'.repeat(1_000_000), /over the limit of 255/],
        ['a name with a NUL byte', 'go\u0000', /name contains a NUL character/],
        ['a lone high surrogate', 'go\uD800', /name contains a lone UTF-16 surrogate/],
        ['a lone low surrogate', '\uDC00go', /lone UTF-16 surrogate/],
      ] as Array<[string, unknown, RegExp]>
    ).map(([label, name, message]) =>
      bad(
        `name: ${label}`,
        () => service.signal(to(), name as string),
        InvalidArgumentError,
        message,
      ),
    );

    const keys: BadCall[] = (
      [
        ['an empty key', '', /idempotencyKey must be a non-empty string/],
        ['a number', 42, /idempotencyKey must be a string, but was 42/],
        ['null', null, /idempotencyKey must be a string, but was null/],
        [
          'a 256-character key',
          'k'.repeat(256),
          /idempotencyKey is 256 characters long, over the limit of 255/,
        ],
        ['a key with a NUL byte', 'k\u0000', /idempotencyKey contains a NUL character/],
        [
          'a key with a lone surrogate',
          'k\uDBFF',
          /idempotencyKey contains a lone UTF-16 surrogate/,
        ],
      ] as Array<[string, unknown, RegExp]>
    ).map(([label, key, message]) =>
      bad(
        `idempotencyKey: ${label}`,
        () => service.signal(to(), 'go', { idempotencyKey: key as string }),
        InvalidArgumentError,
        message,
      ),
    );

    const payloads: BadCall[] = [
      ...(
        [
          ['a BigInt', 10n, /payload is a BigInt/],
          ['a nested BigInt', { amount: { cents: 10n } }, /payload.amount.cents is a BigInt/],
          ['a circular reference', circular(), /payload.self is a circular reference to payload/],
          ['a function', () => 1, /payload is a function/],
          ['a nested function', { onDone: () => 1 }, /payload.onDone is a function/],
          ['a symbol', Symbol('s'), /payload is a symbol/],
          ['NaN', NaN, /payload is NaN/],
          ['Infinity in an array', [1, Infinity], /payload\[1\] is Infinity/],
          ['an undefined array element', [undefined], /payload\[0\] is undefined/],
          ['a Map', new Map([['a', 1]]), /payload is a Map/],
          ['a Set', new Set([1]), /payload is a Set/],
          ['an Error', new Error('boom'), /payload is an Error/],
          ['an Invalid Date', new Date('nope'), /payload is an Invalid Date/],
          ['a Uint8Array', new Uint8Array([1, 2]), /payload is a Uint8Array/],
          [
            'a key that needs quoting, holding a BigInt',
            { 'odd key': 1n },
            /payload\["odd key"\] is a BigInt/,
          ],
          ['nesting 100 000 levels deep', deeplyNested(100_000), /nested too deeply/],
          ...OUT_OF_RANGE_VALUES.map(([label, value, message]): [string, unknown, RegExp] => [
            label,
            { value },
            new RegExp(`payload\\.value ${message.source}`),
          ]),
          [
            'a lone surrogate in a string',
            { note: 'ok\uD800' },
            /payload.note contains a lone UTF-16 surrogate, which is not valid Unicode/,
          ],
          [
            'a lone surrogate in a key',
            { ['k\uDC00']: 1 },
            /payload has a key 'k\\udc00' that contains a lone UTF-16 surrogate/,
          ],
        ] as Array<[string, unknown, RegExp]>
      ).map(([label, payload, message]) =>
        bad(
          `payload: ${label}`,
          () => service.signal(to(), 'go', { payload }),
          InvalidArgumentError,
          message,
        ),
      ),
      bad(
        `payload: over maxSignalPayloadSize (${MAX_PAYLOAD})`,
        () => service.signal(to(), 'go', { payload: 'p'.repeat(MAX_PAYLOAD) }),
        SignalPayloadTooLargeError,
        new RegExp(
          `${MAX_PAYLOAD + 2} bytes of JSON, over maxSignalPayloadSize \\(${MAX_PAYLOAD}\\)`,
        ),
      ),
      bad(
        'payload: multi-byte characters over the byte limit',
        () => service.signal(to(), 'go', { payload: '€'.repeat(1400) }),
        SignalPayloadTooLargeError,
        /4202 bytes of JSON/,
      ),
    ];

    const options: BadCall[] = [
      bad(
        'options as a string',
        () => service.signal(to(), 'go', 'payload' as never),
        InvalidArgumentError,
        /signal\(\) expects an options object/,
      ),
      bad(
        'options as an array',
        () => service.signal(to(), 'go', [] as never),
        InvalidArgumentError,
        /signal\(\) expects an options object/,
      ),
      bad(
        'options null',
        () => service.signal(to(), 'go', null as never),
        InvalidArgumentError,
        /signal\(\) expects an options object/,
      ),
      bad(
        'an unknown key (timeout)',
        () => service.signal(to(), 'go', { timeout: 5 } as never),
        InvalidArgumentError,
        /unknown option\(s\) timeout/,
      ),
      bad(
        'manager: an empty object',
        () => service.signal(to(), 'go', { manager: {} as never }),
        InvalidArgumentError,
        /manager option belongs to another DataSource/,
      ),
      bad(
        'a finished workflow',
        () => service.signal(seeds.finished, 'go'),
        WorkflowNotOngoingError,
        /Cannot deliver signal "go" to a finished workflow/,
      ),
    ];

    it.each(names)('$name → $error.name', (c) => expectRejectedWithoutWrites('signal(name)', c));
    it.each(keys)('$name → $error.name', (c) =>
      expectRejectedWithoutWrites('signal(idempotencyKey)', c),
    );
    it.each(payloads)('$name → $error.name', (c) =>
      expectRejectedWithoutWrites('signal(payload)', c),
    );
    it.each(options)('$name → $error.name', (c) => expectRejectedWithoutWrites('signal(opts)', c));
  });

  // ───────────────────────────── Operator verbs ─────────────────────────────

  describe('operator verbs: arguments and states', () => {
    const verbs: BadCall[] = [
      ...(
        [
          ['a number', 42],
          ['null', null],
          ['undefined', undefined],
          ['an object', { step: 'after' }],
        ] as Array<[string, unknown]>
      ).map(([label, step]) =>
        bad(
          `resumeAt(paused, ${label})`,
          () => service.resumeAt(seeds.paused, step as string),
          InvalidArgumentError,
          /resumeAt\(\) takes the name of a step/,
        ),
      ),
      ...(
        [
          ['an unknown step', 'nope', /at 'nope': that step is not defined/],
          ['an empty step name', '', /at '': that step is not defined/],
          [
            'a SQL-looking step name',
            "after'; DROP TABLE geneva_drive_step_executions; --",
            /that step is not defined/,
          ],
          ['a step name with a NUL byte', 'after\u0000', /that step is not defined/],
          ['a step name with a lone surrogate', 'after\uD800', /that step is not defined/],
          ['a removed step', 'legacy', /that step is a removed step/],
        ] as Array<[string, string, RegExp]>
      ).map(([label, step, message]) =>
        bad(
          `resumeAt(paused, ${label})`,
          () => service.resumeAt(seeds.paused, step),
          StepNotDefinedError,
          message,
        ),
      ),
      ...(
        [
          ['undefined', undefined, /takes job options .* or null to clear them, but got undefined/],
          ['a string', 'fast', /instance stepJobOptions \(setStepJobOptions\) must be an object/],
          ['an array', [{ priority: 1 }], /must be an object/],
          ['a misspelt key (piority)', { piority: 1 }, /unknown job option key\(s\): piority/],
          ['priority 0', { priority: 0 }, /priority: 0/],
          ['a queue with ":"', { queue: 'a:b' }, /queue: 'a:b'/],
          ['wait "later"', { wait: 'later' }, /wait: 'later'/],
          ['waitUntil a number', { waitUntil: 1 }, /waitUntil: 1/],
        ] as Array<[string, unknown, RegExp]>
      ).map(([label, opts, message]) =>
        bad(
          `setStepJobOptions(paused, ${label})`,
          () => service.setStepJobOptions(seeds.paused, opts as never),
          StepConfigurationError,
          message,
        ),
      ),
      bad(
        'pause(paused)',
        () => service.pause(seeds.paused),
        InvalidStateError,
        /Cannot pause a paused workflow/,
      ),
      bad(
        'resume(ready)',
        () => service.resume(seeds.ready),
        InvalidStateError,
        /Cannot resume a ready workflow/,
      ),
      bad(
        'resumeAt(ready, "after")',
        () => service.resumeAt(seeds.ready, 'after'),
        InvalidStateError,
        /Cannot resumeAt a ready workflow/,
      ),
      bad(
        'skip(finished)',
        () => service.skip(seeds.finished),
        InvalidStateError,
        /Cannot skip a finished workflow/,
      ),
      bad(
        'cancel(finished)',
        () => service.cancel(seeds.finished),
        InvalidStateError,
        /Cannot cancel a finished workflow/,
      ),
      bad(
        'resume(finished)',
        () => service.resume(seeds.finished),
        InvalidStateError,
        /Cannot resume a finished workflow/,
      ),
      bad(
        'pause(finished)',
        () => service.pause(seeds.finished),
        InvalidStateError,
        /Cannot pause a finished workflow/,
      ),
    ];

    it.each(verbs)('$name → $error.name', (c) => expectRejectedWithoutWrites('verbs', c));
  });

  // ───────────────────────────── Lookups by workflow class and hero ─────────────────────────────

  describe('findOngoing(workflow, hero), list(filter), removedStepsInFlight(workflow), withInlineEnqueue(fn)', () => {
    const lookups: BadCall[] = [
      bad(
        'findOngoing("Nope", hero)',
        () => service.findOngoing('Nope', orders.saved),
        StepConfigurationError,
        /No workflow registered as 'Nope'/,
      ),
      bad(
        'findOngoing(42, hero)',
        () => service.findOngoing(42 as never, orders.saved),
        InvalidArgumentError,
        /findOngoing\(\) takes a @Workflow class/,
      ),
      bad(
        'findOngoing(W, undefined)',
        () => service.findOngoing(IdleOrderWorkflow, undefined as never),
        InvalidArgumentError,
        /findOngoing\(\) hero must be an entity instance/,
      ),
      bad(
        'findOngoing(W, null)',
        () => service.findOngoing(IdleOrderWorkflow, null as never),
        InvalidArgumentError,
        /findOngoing\(\) hero must be an entity instance/,
      ),
      bad(
        'findOngoing(W, "42")',
        () => service.findOngoing(IdleOrderWorkflow, '42' as never),
        InvalidArgumentError,
        /hero must be an entity instance/,
      ),
      bad(
        'findOngoing(W, an entity of another class)',
        () => service.findOngoing(IdleOrderWorkflow, subscriber),
        InvalidArgumentError,
        /got a Subscriber as hero/,
      ),
      bad(
        'findOngoing(W, { id: "abc" })',
        () => service.findOngoing(IdleOrderWorkflow, { id: 'abc' }),
        InvalidArgumentError,
        /must be an integer/,
      ),
      bad(
        'list("ready")',
        () => service.list('ready' as never),
        InvalidArgumentError,
        /list\(\) expects an options object/,
      ),
      bad(
        'list([])',
        () => service.list([] as never),
        InvalidArgumentError,
        /list\(\) expects an options object/,
      ),
      bad(
        'list(null)',
        () => service.list(null as never),
        InvalidArgumentError,
        /list\(\) expects an options object/,
      ),
      bad(
        'list({ limt: 5 })',
        () => service.list({ limt: 5 } as never),
        InvalidArgumentError,
        /unknown option\(s\) limt/,
      ),
      bad(
        'list({ state: "bogus" })',
        () => service.list({ state: 'bogus' as never }),
        InvalidArgumentError,
        /state must be one of ready, performing, paused, finished, canceled.* but was 'bogus'/,
      ),
      bad(
        'list({ state: [] })',
        () => service.list({ state: [] }),
        InvalidArgumentError,
        /non-empty array/,
      ),
      bad(
        'list({ state: ["ready", "bogus"] })',
        () => service.list({ state: ['ready', 'bogus'] as never }),
        InvalidArgumentError,
        /but was 'bogus'/,
      ),
      bad(
        'list({ state: "ready\' OR 1=1 --" })',
        () => service.list({ state: "ready' OR 1=1 --" as never }),
        InvalidArgumentError,
        /state must be one of/,
      ),
      bad(
        'list({ state: 42 })',
        () => service.list({ state: 42 as never }),
        InvalidArgumentError,
        /state must be one of/,
      ),
      bad(
        'list({ ongoing: "yes" })',
        () => service.list({ ongoing: 'yes' as never }),
        InvalidArgumentError,
        /ongoing must be a boolean/,
      ),
      bad(
        'list({ limit: 0 })',
        () => service.list({ limit: 0 }),
        InvalidArgumentError,
        /limit must be a positive integer, but was 0/,
      ),
      bad(
        'list({ limit: -1 })',
        () => service.list({ limit: -1 }),
        InvalidArgumentError,
        /limit must be a positive integer/,
      ),
      bad(
        'list({ limit: 1.5 })',
        () => service.list({ limit: 1.5 }),
        InvalidArgumentError,
        /limit must be a positive integer/,
      ),
      bad(
        'list({ limit: "10" })',
        () => service.list({ limit: '10' as never }),
        InvalidArgumentError,
        /limit must be a positive integer, but was '10'/,
      ),
      bad(
        'list({ limit: NaN })',
        () => service.list({ limit: NaN }),
        InvalidArgumentError,
        /limit must be a positive integer, but was NaN/,
      ),
      bad(
        'list({ limit: Infinity })',
        () => service.list({ limit: Infinity }),
        InvalidArgumentError,
        /limit must be a positive integer/,
      ),
      bad(
        'list({ offset: -1 })',
        () => service.list({ offset: -1 }),
        InvalidArgumentError,
        /offset must be an integer >= 0/,
      ),
      bad(
        'list({ offset: "0" })',
        () => service.list({ offset: '0' as never }),
        InvalidArgumentError,
        /offset must be an integer >= 0/,
      ),
      bad(
        'list({ workflow: "Nope" })',
        () => service.list({ workflow: 'Nope' }),
        StepConfigurationError,
        /No workflow registered as 'Nope'/,
      ),
      bad(
        'list({ workflow: 42 })',
        () => service.list({ workflow: 42 as never }),
        InvalidArgumentError,
        /list\(\) takes a @Workflow class/,
      ),
      bad(
        'list({ hero: "42" })',
        () => service.list({ hero: '42' as never }),
        InvalidArgumentError,
        /list\(\) hero must be an entity instance/,
      ),
      bad(
        'list({ hero: null })',
        () => service.list({ hero: null as never }),
        InvalidArgumentError,
        /list\(\) hero must be an entity instance/,
      ),
      bad(
        'list({ hero: a plain object, no workflow })',
        () => service.list({ hero: { id: 1 } }),
        InvalidArgumentError,
        /Cannot tell the hero's entity/,
      ),
      bad(
        'removedStepsInFlight("Nope")',
        () => service.removedStepsInFlight('Nope'),
        StepConfigurationError,
        /No workflow registered as 'Nope'/,
      ),
      bad(
        'removedStepsInFlight(null)',
        () => service.removedStepsInFlight(null as never),
        InvalidArgumentError,
        /removedStepsInFlight\(\) takes a @Workflow class/,
      ),
      bad(
        'withInlineEnqueue(undefined)',
        () => service.withInlineEnqueue(undefined as never),
        InvalidArgumentError,
        /withInlineEnqueue\(\) takes a function/,
      ),
      bad(
        'withInlineEnqueue(a promise)',
        () => service.withInlineEnqueue(Promise.resolve(1) as never),
        InvalidArgumentError,
        /withInlineEnqueue\(\) takes a function/,
      ),
    ];

    it.each(lookups)('$name → $error.name', (c) => expectRejectedWithoutWrites('lookups', c));
  });

  // ───────────────────────────── What is not bad input ─────────────────────────────

  describe('values that look hostile but are data: stored verbatim', () => {
    it('a SQL-looking signal name and key are parameters, not SQL: stored as sent, every table intact', async () => {
      const name = "go'; DROP TABLE geneva_drive_signals; --";
      const key = "k'); DELETE FROM geneva_drive_workflows; --";
      const signal = await service.signal(seeds.paused, name, {
        idempotencyKey: key,
        payload: { sql: "' OR 1=1 --" },
      });
      const [stored] = (await service.signals(seeds.paused)).filter((row) => row.id === signal.id);
      expect([stored.name, stored.idempotencyKey, stored.payload]).toEqual([
        name,
        key,
        { sql: "' OR 1=1 --" },
      ]);
      expect(await service.find(seeds.ready.id)).not.toBeNull();
      log.record(
        'accepted',
        'SQL-looking signal name, key and payload',
        'stored verbatim, tables intact',
      );
    });

    it('NUL bytes inside a JSON payload round-trip exactly (JSON stores them escaped as \\u0000)', async () => {
      const payload = { text: 'a\u0000b', ['key\u0000']: 'v', emoji: '😀' };
      const signal = await service.signal(seeds.paused, 'unicode', { payload });
      const [stored] = (await service.signals(seeds.paused)).filter((row) => row.id === signal.id);
      expect(stored.payload).toStrictEqual(payload);
      log.record('accepted', 'NUL in a JSON payload string and key', 'round-trips exactly');
    });

    it('a 255-character signal name of 4-byte characters is within the limit and stored exactly', async () => {
      const name = '😀'.repeat(255);
      const signal = await service.signal(seeds.paused, name);
      expect((await service.signals(seeds.paused)).find((row) => row.id === signal.id)?.name).toBe(
        name,
      );
      log.record('accepted', '255 emoji as a signal name', 'stored exactly');
    });

    it('an id written in capitals finds the workflow', async () => {
      const upper = seeds.ready.id.toUpperCase();
      expect((await service.find(upper))?.id).toBe(seeds.ready.id);
      expect(await service.currentExecution(upper)).not.toBeNull();
      log.record('accepted', 'an upper-case UUID', 'finds the workflow');
    });

    it('Dates on the first and last storable millisecond round-trip through metadata and payloads (as ISO strings)', async () => {
      const edges = {
        first: new Date('0001-01-01T00:00:00.000Z'),
        last: new Date('9999-12-31T23:59:59.999Z'),
      };
      const stored = { first: '0001-01-01T00:00:00.000Z', last: '9999-12-31T23:59:59.999Z' };
      const workflow = await service.start(IdleOrderWorkflow, {
        hero: orders.spare,
        metadata: edges,
      });
      expect((await service.find(workflow.id))?.metadata).toStrictEqual(stored);
      const signal = await service.signal(seeds.paused, 'edges', { payload: edges });
      const [row] = (await service.signals(seeds.paused)).filter((r) => r.id === signal.id);
      expect(row.payload).toStrictEqual(stored);
      await service.cancel(workflow);
      log.record('accepted', 'Dates in years 1 and 9999', 'stored as their ISO strings');
    });

    it('undefined object properties in metadata are left out, as JSON.stringify does', async () => {
      const workflow = await service.start(IdleOrderWorkflow, {
        hero: orders.spare,
        metadata: { kept: 1, dropped: undefined },
      });
      expect((await service.find(workflow.id))?.metadata).toStrictEqual({ kept: 1 });
      await service.cancel(workflow);
      log.record('accepted', 'metadata with an undefined property', 'property left out');
    });
  });
});
