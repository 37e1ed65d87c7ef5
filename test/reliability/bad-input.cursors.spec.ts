import { CursorTooLargeError, InvalidArgumentError, type IterableStep } from '../../lib';
import { testDatabaseLabel } from '../e2e/support/database';
import { EngineHarness } from '../e2e/support/engine-harness';
import { Order } from '../fixtures/order.entity';
import { Subscriber } from '../fixtures/subscriber.entity';
import {
  CheckLog,
  CursorWorkflow,
  circular,
  cursorScript,
  deeplyNested,
  type ErrorClass,
} from './support/bad-input.support';

/**
 * Issue #9 item 6, "Bad input" for resumable cursors: a value that does not round-trip through
 * the JSON cursor column (undefined, functions, BigInt, circular, symbols, …) or is over
 * maxCursorSize fails the step with a typed error naming the problem, and the bad value is never
 * written: the execution keeps the cursor of its last good checkpoint, ends failed/failed with the
 * error's class and message, and the workflow pauses (the default policy) with no successor.
 */
const MAX_CURSOR = 256;
const log = new CheckLog(`bad resumable cursors (${testDatabaseLabel} + BullMQ)`);

type Body = (iter: IterableStep<unknown>) => Promise<unknown>;

interface CursorCase {
  name: string;
  body: Body;
  error: ErrorClass;
  errorName: string;
  message: RegExp;
  /** The cursor left in the row: the last good checkpoint's. */
  kept: unknown;
}

/** Checkpoint 1 (a good cursor), then call `bad`. */
const afterOne =
  (bad: Body): Body =>
  async (iter) => {
    await iter.set(1);
    await bad(iter);
  };

const setTo = (value: unknown): Body => afterOne((iter) => iter.set(value));

const invalid = (name: string, body: Body, message: RegExp, kept: unknown = 1): CursorCase => ({
  name,
  body,
  error: InvalidArgumentError,
  errorName: 'InvalidArgumentError',
  message,
  kept,
});

describe(`bad resumable cursors: typed error, bad value never written (${testDatabaseLabel} + BullMQ)`, () => {
  let harness: EngineHarness;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [CursorWorkflow],
      entities: [Order, Subscriber],
      options: { maxCursorSize: MAX_CURSOR },
    });
  });

  afterAll(async () => {
    log.print();
    await harness?.close();
  });

  const subscribers = () =>
    harness.dataSource.getRepository(Subscriber).createQueryBuilder('subscriber');

  const cases: CursorCase[] = [
    invalid(
      'set(undefined)',
      setTo(undefined),
      /set\(\) cursor is undefined, which JSON cannot represent; use null/,
    ),
    invalid(
      'set(a function)',
      setTo(() => 1),
      /set\(\) cursor is a function/,
    ),
    invalid('set(a BigInt)', setTo(10n), /set\(\) cursor is a BigInt \(10n\)/),
    invalid(
      'set(a circular object)',
      setTo(circular()),
      /set\(\) cursor.self is a circular reference to cursor/,
    ),
    invalid('set(a symbol)', setTo(Symbol('c')), /set\(\) cursor is a symbol/),
    invalid('set(NaN)', setTo(NaN), /set\(\) cursor is NaN/),
    invalid('set(Infinity)', setTo(Infinity), /set\(\) cursor is Infinity/),
    invalid('set(a Map)', setTo(new Map([[1, 2]])), /set\(\) cursor is a Map/),
    invalid('set([undefined])', setTo([undefined]), /set\(\) cursor\[0\] is undefined/),
    invalid(
      'set({ $date: … }), the Date tag',
      setTo({ $date: '2030-01-01' }),
      /cursor is an object whose only key is "\$date", which is reserved/,
    ),
    invalid('set(an Invalid Date)', setTo(new Date('nope')), /set\(\) cursor is an Invalid Date/),
    invalid(
      'set(a string with a lone surrogate)',
      setTo({ after: 'name\uD800' }),
      /set\(\) cursor.after contains a lone UTF-16 surrogate, which is not valid Unicode/,
    ),
    invalid(
      'set(nested 100 000 levels deep)',
      setTo(deeplyNested(100_000)),
      /cursor is nested too deeply/,
    ),
    {
      name: `set(a string over maxCursorSize ${MAX_CURSOR})`,
      body: setTo('x'.repeat(MAX_CURSOR)),
      error: CursorTooLargeError,
      errorName: 'CursorTooLargeError',
      message: new RegExp(
        `${MAX_CURSOR + 2} bytes of JSON, over maxCursorSize \\(${MAX_CURSOR}\\)`,
      ),
      kept: 1,
    },
    invalid(
      'skipTo(a BigInt)',
      afterOne((iter) => iter.skipTo(10n)),
      /skipTo\(\) cursor is a BigInt/,
    ),
    invalid(
      'skipTo(2, { wait: "soon" })',
      afterOne((iter) => iter.skipTo(2, { wait: 'soon' })),
      /skipTo\(\{ wait \}\) takes a duration .* but got 'soon'/,
    ),
    invalid(
      'set(a Date after 9999)',
      setTo({ at: new Date(Date.parse('9999-12-31T23:59:59.999Z') + 1) }),
      /set\(\) cursor\.at is Date\(\+010000-01-01T00:00:00\.000Z\), outside years 1–9999/,
    ),
    invalid(
      'set(a Date BC)',
      setTo(new Date('-000001-01-01T00:00:00.000Z')),
      /set\(\) cursor is Date\(-000001-01-01T00:00:00\.000Z\), outside years 1–9999/,
    ),
    invalid(
      'skipTo(2, { wait: "500000 weeks" }), due after 9999',
      afterOne((iter) => iter.skipTo(2, { wait: '500000 weeks' })),
      /skipTo\(\{ wait \}\) is '500000 weeks', which would make the step due on \+\d{6}-.*, after 9999-12-31T23:59:59\.999Z/,
    ),
    invalid(
      'skipTo(2, { wait: 1e300 })',
      afterOne((iter) => iter.skipTo(2, { wait: 1e300 })),
      /skipTo\(\{ wait \}\) is 1e\+300, which would make the step due beyond the range of a JavaScript Date/,
    ),
    invalid(
      'skipTo(2, { delay: "1h" }), a misspelt option',
      afterOne((iter) => iter.skipTo(2, { delay: '1h' } as never)),
      /skipTo\(\) got unknown option\(s\) delay\. Allowed: wait\./,
    ),
    invalid(
      'skipTo(2, "1h")',
      afterOne((iter) => iter.skipTo(2, '1h' as never)),
      /skipTo\(\) takes options \{ wait\? \}, but got '1h'/,
    ),
    invalid(
      'advance() on a string cursor',
      async (iter) => {
        await iter.set('page-2');
        await iter.advance();
      },
      /advance\(\) needs an integer cursor, but the cursor is "page-2"/,
      'page-2',
    ),
    invalid(
      'iterateOver() on a string cursor',
      async (iter) => {
        await iter.set('page-2');
        await iter.iterateOver([1, 2, 3], () => undefined);
      },
      /iterateOver\(\) keeps the index of the next item as cursor, but the cursor is 'page-2'/,
      'page-2',
    ),
    invalid(
      'iterateOver(a number)',
      afterOne((iter) => iter.iterateOver(3 as never, () => undefined)),
      /iterateOver\(\) needs an iterable/,
    ),
    invalid(
      'iterateOverRecords() with a SQL-looking cursorColumn',
      afterOne((iter) =>
        iter.iterateOverRecords(subscribers(), () => undefined, {
          cursorColumn: 'id; DROP TABLE test_subscribers; --',
        }),
      ),
      /iterateOverRecords\(\) cursorColumn must name a column property of the query's entity, but was 'id; DROP TABLE test_subscribers; --'; Subscriber has id, email/,
    ),
    invalid(
      'iterateOverRecords() with an unknown cursorColumn',
      afterOne((iter) =>
        iter.iterateOverRecords(subscribers(), () => undefined, { cursorColumn: 'createdAt' }),
      ),
      /cursorColumn must name a column property .* but was 'createdAt'/,
    ),
    invalid(
      'iterateOverBatches() with options null',
      afterOne((iter) => iter.iterateOverBatches(subscribers(), null as never, () => undefined)),
      /iterateOverBatches\(\) takes options \{ batchSize, cursorColumn\? \}, but got null/,
    ),
    invalid(
      'iterateOverBatches() with batchSize 0',
      afterOne((iter) => iter.iterateOverBatches(subscribers(), { batchSize: 0 }, () => undefined)),
      /needs a positive integer batchSize, got 0/,
    ),
  ];

  it.each(cases)(
    '$name → $errorName; the cursor stays at the last good checkpoint',
    async ({ name, body, error, errorName, message, kept }) => {
      cursorScript.run = body;
      const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
      const workflow = await harness.service.start(CursorWorkflow, { hero: order });
      await harness.waitForState(workflow.id, 'paused');
      const history = await harness.history(workflow.id);
      expect(history).toHaveLength(1);
      const [execution] = history;
      log.record('cursor', name, `${execution.errorClassName}: ${execution.errorMessage}`);
      expect([execution.state, execution.outcome]).toEqual(['failed', 'failed']);
      expect(execution.errorClassName).toBe(errorName);
      expect(execution.errorClassName).toBe(error.name);
      expect(execution.errorMessage).toMatch(message);
      expect(execution.cursor).toStrictEqual(kept);
      expect(await harness.service.signals(workflow)).toEqual([]);
    },
  );

  it('accepted: a Date, and NUL bytes inside strings, round-trip through the cursor', async () => {
    const cursor = {
      at: new Date('2030-01-02T03:04:05.678Z'),
      text: 'a\u0000b',
      list: [1, 'two', null],
    };
    cursorScript.run = async (iter) => iter.set(cursor);
    const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    const workflow = await harness.service.start(CursorWorkflow, { hero: order });
    await harness.waitForState(workflow.id, 'finished');
    const [walk] = await harness.history(workflow.id);
    expect(walk.cursor).toStrictEqual(cursor);
    log.record('cursor', 'a Date and NUL inside strings', 'round-trip exactly');
  });
});
