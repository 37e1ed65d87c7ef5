import type { DataSource } from 'typeorm';
import {
  InvalidArgumentError,
  ModuleOptionsError,
  StepExecutionEntity,
  WorkflowEntity,
  WorkflowNotFoundError,
} from '../../lib';
import { parseDurationOrNull, waitProblem } from '../../lib/common/duration';
import {
  MAX_STORED_STRING_LENGTH,
  MAX_STORED_TIME,
  MIN_STORED_TIME,
  characterCount,
  describeValue,
  dueTimeProblem,
  isPlainObject,
  jsonDataProblem,
  storedDateProblem,
  storedStringProblem,
} from '../../lib/common/input-guards';
import { checkMysqlSqlMode } from '../../lib/adapters/typeorm/mysql-sql-mode.check';
import { FlowControlSignal } from '../../lib/runner/flow-control';
import { StepContextImpl } from '../../lib/runner/step-context';
import { workflowIdOf, workflowNotFound } from '../../lib/common/workflow-like';
import {
  validateForRootArgument,
  validateForRootAsyncArgument,
} from '../../lib/options/module-arguments.validator';
import { IterableStepImpl } from '../../lib/resumable/iterable-step';

describe('storedStringProblem (strings bound for a text column)', () => {
  it.each([
    ['a name', 'payment_confirmed'],
    ['SQL-looking text (it is a parameter)', "'; DROP TABLE x; --"],
    ['255 four-byte characters', '😀'.repeat(255)],
    ['a surrogate pair', 'a😀b'],
  ])('accepts %s', (_label, value) => {
    expect(storedStringProblem(value)).toBeNull();
  });

  it.each([
    ['a number', 42, /must be a string, but was 42/],
    ['null', null, /must be a string, but was null/],
    ['an empty string', '', /must not be blank, but was ''/],
    ['whitespace', ' \t', /must not be blank/],
    ['a NUL character', 'a\u0000b', /contains a NUL character \(\\u0000\).*'a\\u0000b'/],
    ['a lone high surrogate', 'a\uD800', /contains a lone UTF-16 surrogate.*'a\\ud800'/],
    ['a lone low surrogate', '\uDC00a', /lone UTF-16 surrogate/],
    ['a reversed pair', '\uDE00\uD83D', /lone UTF-16 surrogate/],
    ['256 characters', 'x'.repeat(256), /is 256 characters long, over the limit of 255/],
  ])('refuses %s', (_label, value, message) => {
    expect(storedStringProblem(value)).toMatch(message);
  });

  it('allows blank strings when asked, and takes another limit', () => {
    expect(storedStringProblem(' ', { allowBlank: true })).toBeNull();
    expect(storedStringProblem('abcd', { maxLength: 3 })).toMatch(
      /is 4 characters long, over the limit of 3/,
    );
    expect(MAX_STORED_STRING_LENGTH).toBe(255);
  });

  it('counts characters as the database does (code points, not UTF-16 units)', () => {
    expect(characterCount('😀😀')).toBe(2);
    expect(characterCount('')).toBe(0);
  });
});

describe('jsonDataProblem (values bound for a JSON column)', () => {
  class Row {
    constructor(readonly id: number) {}
  }

  it.each([
    ['null', null],
    ['a string and a key with NUL (JSON escapes it)', { ['k\u0000']: 'a\u0000' }],
    ['surrogate pairs', { '😀': '😀' }],
    ['finite numbers and booleans', [0, -1.5, true, false]],
    ['nested plain data', { a: [{ b: 'c' }], 'odd key': null }],
    ['a Date', new Date()],
    ['the first storable Date (0001-01-01T00:00:00.000Z)', new Date(MIN_STORED_TIME)],
    ['the last storable Date (9999-12-31T23:59:59.999Z)', new Date(MAX_STORED_TIME)],
    [
      'boxed primitives (stored as the primitive)',
      [new String('x'), new Number(1), new Boolean(false)],
    ],
    [
      'an object whose property is undefined (left out, as JSON.stringify does)',
      { kept: 1, dropped: undefined },
    ],
    ['a class instance (its own fields are stored)', new Row(1)],
    ['an object with toJSON', { toJSON: () => ({ ok: true }) }],
    [
      'the same object twice (shared, not circular)',
      (() => {
        const shared = { x: 1 };
        return [shared, shared];
      })(),
    ],
  ])('accepts %s', (_label, value) => {
    expect(jsonDataProblem(value, 'payload')).toBeNull();
  });

  const loop: Record<string, unknown> = { inner: { list: [] as unknown[] } };
  (loop.inner as { list: unknown[] }).list.push(loop);

  it.each([
    ['undefined', undefined, 'payload is undefined, which JSON cannot represent; use null'],
    [
      'a BigInt',
      5n,
      'payload is a BigInt (5n), which JSON cannot represent; convert it to a string or a number',
    ],
    [
      'a function',
      () => 1,
      'payload is a function, which JSON cannot represent (it would be silently dropped)',
    ],
    [
      'a symbol',
      Symbol('s'),
      'payload is a symbol, which JSON cannot represent (it would be silently dropped)',
    ],
    ['NaN', NaN, 'payload is NaN, which JSON cannot represent (it would be stored as null)'],
    [
      '-Infinity deep inside',
      { a: { b: [1, -Infinity] } },
      'payload.a.b[1] is -Infinity, which JSON cannot represent (it would be stored as null)',
    ],
    [
      'an undefined array element',
      [1, undefined],
      'payload[1] is undefined, which JSON stores as null in an array; use null',
    ],
    ['an Invalid Date', new Date('x'), 'payload is an Invalid Date'],
    [
      'a Map',
      new Map(),
      'payload is a Map, which JSON cannot represent (it would be stored as {}); convert it to plain data',
    ],
    [
      'a Set under a quoted key',
      { 'a b': new Set() },
      'payload["a b"] is a Set, which JSON cannot represent (it would be stored as {}); convert it to plain data',
    ],
    [
      'an Error',
      new TypeError('x'),
      'payload is an Error, which JSON cannot represent (it would be stored as {}); convert it to plain data',
    ],
    [
      'a Buffer',
      Buffer.from('x'),
      'payload is a Buffer, which JSON cannot represent faithfully; convert it to an array or a string',
    ],
    [
      'a circular reference',
      loop,
      'payload.inner.list[0] is a circular reference to payload, which JSON cannot represent',
    ],
    [
      'a lone surrogate in a string',
      ['\uD800'],
      'payload[0] contains a lone UTF-16 surrogate, which is not valid Unicode (MariaDB/MySQL refuse it in JSON; PostgreSQL jsonb too)',
    ],
    [
      'a lone surrogate in a key',
      { a: { ['\uDC00']: 1 } },
      "payload.a has a key '\\udc00' that contains a lone UTF-16 surrogate, which is not valid Unicode (MariaDB/MySQL refuse it in JSON; PostgreSQL jsonb too)",
    ],
    [
      'a toJSON returning a BigInt',
      { toJSON: () => 1n },
      'payload is a BigInt (1n), which JSON cannot represent; convert it to a string or a number',
    ],
    [
      'a Date after year 9999',
      { at: new Date(MAX_STORED_TIME + 1) },
      'payload.at is Date(+010000-01-01T00:00:00.000Z), outside years 1–9999: the library stores dates from 0001-01-01 to 9999-12-31 (UTC) only',
    ],
    [
      'a Date in year 0',
      [new Date(MIN_STORED_TIME - 1)],
      'payload[0] is Date(0000-12-31T23:59:59.999Z), outside years 1–9999: the library stores dates from 0001-01-01 to 9999-12-31 (UTC) only',
    ],
    [
      'a Date BC, returned by toJSON',
      { toJSON: () => new Date('-000100-01-01T00:00:00.000Z') },
      'payload is Date(-000100-01-01T00:00:00.000Z), outside years 1–9999: the library stores dates from 0001-01-01 to 9999-12-31 (UTC) only',
    ],
    [
      'a boxed NaN',
      { ratio: new Number(NaN) },
      'payload.ratio is NaN, which JSON cannot represent (it would be stored as null)',
    ],
    [
      'a boxed BigInt',
      Object(7n),
      'payload is a BigInt (7n), which JSON cannot represent; convert it to a string or a number',
    ],
    [
      'a WeakRef',
      new WeakRef({}),
      'payload is a WeakRef, which JSON cannot represent (it would be stored as {}); convert it to plain data',
    ],
    [
      'a URLSearchParams (no own fields)',
      { query: new URLSearchParams('a=1') },
      'payload.query is a URLSearchParams instance without a single own enumerable field, which JSON would store as {}; convert it to plain data',
    ],
    [
      'a class instance whose data lives in getters',
      new (class Money {
        get cents() {
          return 5;
        }
      })(),
      'payload is a Money instance without a single own enumerable field, which JSON would store as {}; convert it to plain data',
    ],
  ])('refuses %s, naming the path', (_label, value, message) => {
    expect(jsonDataProblem(value, 'payload')).toBe(message);
  });

  it('refuses nesting too deep to serialize instead of overflowing the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(jsonDataProblem(deep, 'cursor')).toBe(
      'cursor is nested too deeply to serialize as JSON',
    );
  });

  it('reserves the cursor Date tag only when asked', () => {
    expect(jsonDataProblem({ $date: 'x' }, 'cursor', { reserveDateTag: true })).toMatch(
      /only key is "\$date", which is reserved/,
    );
    expect(jsonDataProblem({ $date: 'x' }, 'payload')).toBeNull();
    expect(
      jsonDataProblem({ $date: 'x', other: 1 }, 'cursor', { reserveDateTag: true }),
    ).toBeNull();
  });
});

describe('storedDateProblem and dueTimeProblem (dates bound for a timestamp column)', () => {
  it('stores years 1 to 9999, to the millisecond', () => {
    expect(new Date(MIN_STORED_TIME).toISOString()).toBe('0001-01-01T00:00:00.000Z');
    expect(new Date(MAX_STORED_TIME).toISOString()).toBe('9999-12-31T23:59:59.999Z');
    for (const date of [new Date(MIN_STORED_TIME), new Date(MAX_STORED_TIME), new Date()])
      expect(storedDateProblem(date)).toBeNull();
  });

  it.each([
    ['an Invalid Date', new Date('nope'), /^is an Invalid Date$/],
    [
      'a millisecond past 9999',
      new Date(MAX_STORED_TIME + 1),
      /^is Date\(\+010000-01-01T00:00:00\.000Z\), outside years 1–9999/,
    ],
    [
      'a millisecond before year 1',
      new Date(MIN_STORED_TIME - 1),
      /^is Date\(0000-12-31T23:59:59\.999Z\), outside years 1–9999/,
    ],
    ['a date string', '2030-01-01', /^must be a Date, but was '2030-01-01'$/],
    ['a timestamp number', 1_700_000_000_000, /^must be a Date, but was 1700000000000$/],
  ])('refuses %s', (_label, value, message) => {
    expect(storedDateProblem(value)).toMatch(message);
  });

  const now = Date.parse('2026-01-01T00:00:00.000Z');

  it('lets a wait end on the last storable millisecond, not one later', () => {
    expect(dueTimeProblem(MAX_STORED_TIME - now, now)).toBeNull();
    expect(dueTimeProblem(MAX_STORED_TIME - now + 1, now)).toBe(
      'would make the step due on +010000-01-01T00:00:00.000Z, after 9999-12-31T23:59:59.999Z: the library stores dates from 0001-01-01 to 9999-12-31 (UTC) only',
    );
  });

  it('says so when the due time is past what a JavaScript Date holds', () => {
    expect(dueTimeProblem(1e300, now)).toMatch(
      /^would make the step due beyond the range of a JavaScript Date/,
    );
    expect(dueTimeProblem(Infinity, now)).toMatch(/beyond the range of a JavaScript Date/);
  });
});

describe('waitProblem (the wait of a flow-control verb)', () => {
  const now = Date.parse('2026-01-01T00:00:00.000Z');

  it.each([0, 1500, '30s', '2 days', '1000 weeks', MAX_STORED_TIME - now])('accepts %p', (wait) => {
    expect(waitProblem(wait, now)).toBeNull();
  });

  it.each([
    ['a word', 'soon', "takes a duration (ms or a string such as '30s'), but got 'soon'"],
    ['a negative number', -1, "takes a duration (ms or a string such as '30s'), but got -1"],
    ['NaN', NaN, "takes a duration (ms or a string such as '30s'), but got NaN"],
    [
      '500000 weeks (past 9999)',
      '500000 weeks',
      "is '500000 weeks', which would make the step due on +011608-09-04T00:00:00.000Z, after 9999-12-31T23:59:59.999Z: the library stores dates from 0001-01-01 to 9999-12-31 (UTC) only; use a shorter wait, or pause the workflow instead",
    ],
    [
      'a millisecond too many',
      MAX_STORED_TIME - now + 1,
      `is ${MAX_STORED_TIME - now + 1}, which would make the step due on +010000-01-01T00:00:00.000Z`,
    ],
    [
      '1e300 ms',
      1e300,
      'is 1e+300, which would make the step due beyond the range of a JavaScript Date',
    ],
  ])('refuses %s', (_label, wait, message) => {
    expect(waitProblem(wait, now)).toContain(message);
  });

  it('a duration string of more digits than a number holds is no duration (not Infinity ms)', () => {
    const huge = `1${'0'.repeat(400)}ms`;
    expect(parseDurationOrNull(huge)).toBeNull();
    expect(waitProblem(huge, now)).toMatch(/^takes a duration/);
  });
});

describe('StepContext checks: a bad argument throws from the call, before anything is recorded', () => {
  const logger = { log: () => undefined, error: () => undefined, warn: () => undefined };

  function context(resumable = false, user?: Record<string, unknown>) {
    const execution = Object.assign(new StepExecutionEntity(), {
      stepName: 'charge',
      metadata: user ? { user } : null,
    });
    return new StepContextImpl(new WorkflowEntity(), null, execution, null, logger, resumable);
  }

  /** The error `call` throws synchronously (the step's exception policy gets it). */
  function thrownBy(call: () => unknown): Error {
    try {
      call();
    } catch (error) {
      return error as Error;
    }
    throw new Error('did not throw');
  }

  it.each([
    [
      'a BigInt',
      10n,
      'ctx.metadata.set() metadata.x is a BigInt (10n), which JSON cannot represent; convert it to a string or a number. Step metadata is stored as JSON (step execution metadata.user): store plain data.',
    ],
    [
      'NaN (stored as null without the check)',
      NaN,
      'metadata.x is NaN, which JSON cannot represent (it would be stored as null)',
    ],
    ['-Infinity deep inside', { a: [-Infinity] }, 'metadata.x.a[0] is -Infinity'],
    ['a function', () => 1, 'metadata.x is a function'],
    ['a symbol', Symbol('s'), 'metadata.x is a symbol'],
    [
      'an undefined array element',
      [1, undefined],
      'metadata.x[1] is undefined, which JSON stores as null in an array; use null',
    ],
    [
      'a Date after 9999',
      new Date(MAX_STORED_TIME + 1),
      'metadata.x is Date(+010000-01-01T00:00:00.000Z), outside years 1–9999',
    ],
    ['an Invalid Date', new Date('nope'), 'metadata.x is an Invalid Date'],
    ['a Map', new Map(), 'metadata.x is a Map'],
    ['a lone surrogate', 'a\uD800', 'metadata.x contains a lone UTF-16 surrogate'],
  ])(
    'metadata.set(key, %s) throws InvalidArgumentError naming the key, and stores nothing',
    (_label, value, message) => {
      const ctx = context(false, { before: 1 });
      const error = thrownBy(() => ctx.metadata.set('x', value));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.message).toContain(message);
      expect(ctx.userMetadataValues).toStrictEqual({ before: 1 });
      expect(ctx.metadata.get('x')).toBeUndefined();
      expect(ctx.request).toBeNull();
    },
  );

  it('metadata.set names a key that needs quoting, and refuses a key that is not a string or not Unicode', () => {
    const ctx = context();
    expect(thrownBy(() => ctx.metadata.set('odd key', 1n)).message).toContain(
      'metadata["odd key"] is a BigInt',
    );
    expect(thrownBy(() => ctx.metadata.set(7 as never, 1))).toEqual(
      new InvalidArgumentError('ctx.metadata.set(key, value) takes a string key, but got 7.'),
    );
    expect(thrownBy(() => ctx.metadata.set('\uDC00', 1)).message).toContain(
      "metadata has a key '\\udc00' that contains a lone UTF-16 surrogate",
    );
    expect(ctx.userMetadataValues).toStrictEqual({});
  });

  it('metadata.set keeps good values (Dates, NUL, class instances), removes a key on undefined, and keeps __proto__ an own key', () => {
    const ctx = context();
    const at = new Date(MAX_STORED_TIME);
    class Row {
      constructor(readonly id: number) {}
    }
    ctx.metadata.set('at', at);
    ctx.metadata.set('text', 'a\u0000b');
    ctx.metadata.set('row', new Row(3));
    ctx.metadata.set('gone', 1);
    ctx.metadata.set('gone', undefined);
    ctx.metadata.set('__proto__', { polluted: true });
    expect(ctx.metadata.get('at')).toBe(at);
    expect(ctx.metadata.get('toString')).toBeUndefined();
    expect(Object.getPrototypeOf(ctx.userMetadataValues)).toBe(Object.prototype);
    expect(JSON.stringify(ctx.userMetadataValues)).toBe(
      '{"at":"9999-12-31T23:59:59.999Z","text":"a\\u0000b","row":{"id":3},"__proto__":{"polluted":true}}',
    );
  });

  it.each([
    [
      'reattempt 500000 weeks',
      (ctx: StepContextImpl) => ctx.reattempt({ wait: '500000 weeks' }),
      /^ctx\.reattempt\(\{ wait \}\) is '500000 weeks', which would make the step due on \+\d{6}-.*after 9999-12-31T23:59:59\.999Z.*use a shorter wait/,
    ],
    [
      'reattempt 1e300 ms',
      (ctx: StepContextImpl) => ctx.reattempt({ wait: 1e300 }),
      /^ctx\.reattempt\(\{ wait \}\) is 1e\+300, which would make the step due beyond the range of a JavaScript Date/,
    ],
    [
      'reattempt "soon"',
      (ctx: StepContextImpl) => ctx.reattempt({ wait: 'soon' as never }),
      /^ctx\.reattempt\(\{ wait \}\) takes a duration .* but got 'soon'/,
    ],
    [
      'reattempt("5m"), options as a string',
      (ctx: StepContextImpl) => ctx.reattempt('5m' as never),
      /^ctx\.reattempt\(\) takes options \{ wait\?, rewind\? \}, but got '5m'/,
    ],
    [
      'reattempt({ delay }), a misspelt key',
      (ctx: StepContextImpl) => ctx.reattempt({ delay: '5m' } as never),
      /^ctx\.reattempt\(\) got unknown option\(s\) delay\. Allowed: wait, rewind\.$/,
    ],
    [
      'reattempt({ rewind: "yes" })',
      (ctx: StepContextImpl) => ctx.reattempt({ rewind: 'yes' as never }),
      /^ctx\.reattempt\(\{ rewind \}\) takes a boolean, but got 'yes'/,
    ],
    [
      'suspend 500000 weeks',
      (ctx: StepContextImpl) => ctx.suspend({ wait: '500000 weeks' }),
      /^ctx\.suspend\(\{ wait \}\) is '500000 weeks', which would make the step due/,
    ],
    [
      'suspend(null)',
      (ctx: StepContextImpl) => ctx.suspend(null as never),
      /^ctx\.suspend\(\) takes options \{ wait\? \}, but got null/,
    ],
  ])(
    '%s throws InvalidArgumentError, not the flow-control signal, and records no request',
    (_label, call, message) => {
      const ctx = context(true);
      const error = thrownBy(() => call(ctx));
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.message).toMatch(message);
      expect(ctx.request).toBeNull();
    },
  );

  it('a wait that ends by 9999 is a request as before', () => {
    const ctx = context(true);
    expect(thrownBy(() => ctx.reattempt({ wait: '1000 weeks', rewind: true }))).toBeInstanceOf(
      FlowControlSignal,
    );
    expect(ctx.request).toEqual({ action: 'reattempt', wait: '1000 weeks', rewind: true });
  });
});

describe('checkMysqlSqlMode (MariaDB/MySQL boot check)', () => {
  function sourceWithMode(sqlMode: string | null): DataSource {
    return { query: () => Promise.resolve([{ sqlMode }]) } as unknown as DataSource;
  }

  it.each([
    [
      'the MariaDB default',
      'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION',
    ],
    ['an empty mode', ''],
    ['a NULL mode', null],
    ['ANSI_QUOTES (quoting identifiers is not the issue)', 'ANSI_QUOTES'],
  ])('accepts %s', async (_label, mode) => {
    await expect(checkMysqlSqlMode(sourceWithMode(mode))).resolves.toBeUndefined();
  });

  it.each([
    [
      'NO_BACKSLASH_ESCAPES among others',
      'STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES,NO_ENGINE_SUBSTITUTION',
      "sql_mode = 'STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'",
    ],
    ['NO_BACKSLASH_ESCAPES alone, in lower case', 'no_backslash_escapes', "sql_mode = ''"],
  ])(
    'refuses %s with ModuleOptionsError naming the setting, the reason and the fix',
    async (_label, mode, fix) => {
      const error = await checkMysqlSqlMode(sourceWithMode(mode)).then(
        () => null,
        (thrown: unknown) => thrown as Error,
      );
      expect(error).toBeInstanceOf(ModuleOptionsError);
      expect(error?.message).toContain(
        `runs with sql_mode '${mode}', which contains NO_BACKSLASH_ESCAPES`,
      );
      expect(error?.message).toContain(
        "TypeORM's mysql2 driver formats bound values into the SQL text on the client",
      );
      expect(error?.message).toContain(
        `Remove NO_BACKSLASH_ESCAPES from the sql_mode of this data source's connections, e.g. ${fix}`,
      );
    },
  );
});

describe('describeValue and isPlainObject', () => {
  it.each([
    ['x', "'x'"],
    ['a\u0000\uD800"', "'a\\u0000\\ud800\"'"],
    ['y'.repeat(100), `'${'y'.repeat(60)}…' (100 UTF-16 units)`],
    [null, 'null'],
    [undefined, 'undefined'],
    [3n, '3n'],
    [[1, 2], 'an array (length 2)'],
    [{}, 'an object'],
    [new Map(), 'a Map instance'],
    [new (class Order {})(), 'an Order instance'],
    [new Date('x'), 'Invalid Date'],
  ])('describeValue(%p) is %s', (value, rendered) => {
    expect(describeValue(value)).toBe(rendered);
  });

  it('isPlainObject accepts {} and null-prototype objects only', () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
    for (const value of [[], new Date(), new Map(), null, 'x', new (class A {})()])
      expect(isPlainObject(value)).toBe(false);
  });
});

describe('workflowIdOf and workflowNotFound', () => {
  it('takes an id or an entity, lower-casing UUIDs', () => {
    const id = '0190A000-0000-7000-8000-00000000ABCD';
    expect(workflowIdOf(id)).toBe(id.toLowerCase());
    expect(workflowIdOf(Object.assign(new WorkflowEntity(), { id }))).toBe(id.toLowerCase());
    expect(workflowIdOf('not-a-uuid')).toBe('not-a-uuid');
  });

  it.each([undefined, null, 42, {}, { id: 1 }, ['x']])(
    'refuses %p with InvalidArgumentError naming the method',
    (value) => {
      expect(() => workflowIdOf(value as string, 'pause()')).toThrow(InvalidArgumentError);
      expect(() => workflowIdOf(value as string, 'pause()')).toThrow(
        /pause\(\) takes a WorkflowEntity or a workflow id string/,
      );
    },
  );

  it('says when an id is not a UUID at all, escaped and cut', () => {
    expect(workflowNotFound('0190a000-0000-7000-8000-00000000abcd')).toEqual(
      new WorkflowNotFoundError("No workflow with id '0190a000-0000-7000-8000-00000000abcd'."),
    );
    expect(workflowNotFound('x\u0000').message).toBe(
      "No workflow with id 'x\\u0000': workflow ids are UUIDs (WorkflowEntity.id).",
    );
  });
});

describe('forRoot / forRootAsync arguments', () => {
  it('forRoot takes an options object or nothing', () => {
    expect(() => validateForRootArgument(undefined)).not.toThrow();
    expect(() => validateForRootArgument({ prefix: 'x' })).not.toThrow();
    for (const bad of [null, 'x', [], 1])
      expect(() => validateForRootArgument(bad)).toThrow(ModuleOptionsError);
    expect(() => validateForRootArgument(JSON.parse('{"__proto__":{}}'))).toThrow(
      /__proto__ is not a known option/,
    );
  });

  it('forRootAsync needs exactly one factory and well-typed extras, naming every problem', () => {
    expect(() =>
      validateForRootAsyncArgument({
        useFactory: () => ({}),
        inject: [],
        imports: [],
        isGlobal: false,
        queues: { q: {} },
      }),
    ).not.toThrow();
    expect(() =>
      validateForRootAsyncArgument({ useFactroy: () => ({}), isGlobal: 1, inject: 'X' }),
    ).toThrow(
      new ModuleOptionsError(
        "GenevaDriveModule.forRootAsync() has invalid options: useFactroy is not a known option (did you mean useFactory?); one of useFactory, useClass or useExisting is required; inject must be an array, but was 'X'; isGlobal must be a boolean, but was 1.",
      ),
    );
  });
});

describe('IterableStep cursor checks: a bad cursor never reaches the writer', () => {
  const never = { shouldInterrupt: () => Promise.resolve(null) };

  function iterable(cursor: unknown = null) {
    const written: unknown[] = [];
    const step = new IterableStepImpl<unknown>(
      cursor,
      false,
      (value) => Promise.resolve(void written.push(value)),
      never,
    );
    return { step, written };
  }

  it.each([
    ['undefined', undefined],
    ['a BigInt', 1n],
    ['a function', () => 1],
    [
      'a circular object',
      (() => {
        const o: Record<string, unknown> = {};
        o.o = o;
        return o;
      })(),
    ],
    ['the Date tag', { $date: 'x' }],
  ])(
    'set(%s) rejects with InvalidArgumentError and writes nothing; the cursor stays',
    async (_label, value) => {
      const { step, written } = iterable(4);
      await expect(step.set(value)).rejects.toThrow(InvalidArgumentError);
      await expect(step.skipTo(value)).rejects.toThrow(InvalidArgumentError);
      expect(written).toEqual([]);
      expect(step.cursor).toBe(4);
      expect(step.iterations).toBe(0);
    },
  );

  it('skipTo with a bad wait is an InvalidArgumentError, before any write', async () => {
    const { step, written } = iterable();
    await expect(step.skipTo(1, { wait: 'soon' })).rejects.toThrow(
      /skipTo\(\{ wait \}\) takes a duration/,
    );
    expect(written).toEqual([]);
  });

  it.each([
    [
      'a wait past 9999',
      { wait: '500000 weeks' },
      /^skipTo\(\{ wait \}\) is '500000 weeks', which would make the step due on \+\d{6}-.*after 9999-12-31/,
    ],
    [
      'an unknown option',
      { delay: '1h' },
      /^skipTo\(\) got unknown option\(s\) delay\. Allowed: wait\.$/,
    ],
    ['options as an array', [], /^skipTo\(\) takes options \{ wait\? \}, but got an array/],
  ])(
    'skipTo with %s is an InvalidArgumentError, before any write',
    async (_label, options, message) => {
      const { step, written } = iterable(4);
      const error = await step
        .skipTo(5, options as never)
        .catch((thrown: unknown) => thrown as Error);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect(error.message).toMatch(message);
      expect(written).toEqual([]);
      expect(step.cursor).toBe(4);
      expect(step.interrupted).toBeNull();
    },
  );

  it('set() refuses a Date outside years 1–9999', async () => {
    const { step, written } = iterable();
    await expect(step.set({ at: new Date(MAX_STORED_TIME + 1) })).rejects.toThrow(
      /set\(\) cursor\.at is Date\(\+010000-01-01T00:00:00\.000Z\), outside years 1–9999/,
    );
    expect(written).toEqual([]);
  });

  it('advance() refuses to count past Number.MAX_SAFE_INTEGER', async () => {
    const { step, written } = iterable(Number.MAX_SAFE_INTEGER);
    await expect(step.advance()).rejects.toThrow(
      /advance\(\) cannot count past 9007199254740991: the next integer is not exact/,
    );
    expect(written).toEqual([]);
  });

  it('iterateOver needs an index cursor', async () => {
    const { step, written } = iterable('page-2');
    await expect(step.iterateOver([1], () => undefined)).rejects.toThrow(
      /iterateOver\(\) keeps the index of the next item as cursor/,
    );
    expect(written).toEqual([]);
  });

  it('good cursors are written as given', async () => {
    const { step, written } = iterable();
    const at = new Date();
    await step.set({ at, text: 'a\u0000' });
    await step.set(null);
    expect(written).toEqual([{ at, text: 'a\u0000' }, null]);
  });
});
