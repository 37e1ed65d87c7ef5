import {
  InvalidArgumentError,
  ModuleOptionsError,
  WorkflowEntity,
  WorkflowNotFoundError,
} from '../../lib';
import {
  MAX_STORED_STRING_LENGTH,
  characterCount,
  describeValue,
  isPlainObject,
  jsonDataProblem,
  storedStringProblem,
} from '../../lib/common/input-guards';
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
        "GenevaDriveModule.forRootAsync() has invalid options: useFactroy is not a known option; one of useFactory, useClass or useExisting is required; inject must be an array, but was 'X'; isGlobal must be a boolean, but was 1.",
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
