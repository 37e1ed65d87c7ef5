import { InvalidArgumentError, type StepContext } from '../../lib';
import { testDatabaseLabel } from '../e2e/support/database';
import { EngineHarness } from '../e2e/support/engine-harness';
import {
  InputLimitsWorkflow,
  ResumableInputLimitsWorkflow,
  inputLimitScript,
} from '../fixtures/input-limits.workflows';
import { CheckLog, circular } from './support/bad-input.support';

/**
 * SPEC §16.1, "Bad input" inside a step: `ctx.metadata.set()` with a value JSON cannot store as
 * given, and `ctx.reattempt()`/`ctx.suspend()` with options that are not usable (a wait whose end
 * is past year 9999, a misspelt key). Each throws InvalidArgumentError from the call, so the
 * default policy (pause) handles it like any other error; and the bad value is never written: the
 * execution ends failed/failed with the error's class and message, its `metadata.user` holds only
 * the good key set before, no successor is scheduled, and the workflow is paused.
 */
const log = new CheckLog(`bad input inside a step (${testDatabaseLabel} + BullMQ)`);

const LAST_STORABLE = Date.parse('9999-12-31T23:59:59.999Z');

interface StepCase {
  name: string;
  /** What the step does after `ctx.metadata.set('kept', 1)`. */
  body: (ctx: StepContext<null>) => unknown;
  message: RegExp;
  /** A resumable step (suspend needs one). */
  resumable?: boolean;
}

const setTo =
  (value: unknown, key = 'x') =>
  (ctx: StepContext<null>) =>
    ctx.metadata.set(key, value);

const metadataCases: StepCase[] = (
  [
    ['a BigInt', 10n, /metadata\.x is a BigInt \(10n\), which JSON cannot represent/],
    ['a nested BigInt', { cents: [1n] }, /metadata\.x\.cents\[0\] is a BigInt \(1n\)/],
    ['NaN', NaN, /metadata\.x is NaN, which JSON cannot represent \(it would be stored as null\)/],
    ['Infinity', Infinity, /metadata\.x is Infinity/],
    ['a boxed NaN', new Number(NaN), /metadata\.x is NaN/],
    ['a function', () => 1, /metadata\.x is a function/],
    ['a symbol', Symbol('s'), /metadata\.x is a symbol/],
    ['an undefined array element', [1, undefined], /metadata\.x\[1\] is undefined/],
    ['a Map', new Map([['a', 1]]), /metadata\.x is a Map/],
    ['an Error', new Error('x'), /metadata\.x is an Error/],
    [
      'a circular reference',
      circular(),
      /metadata\.x\.self is a circular reference to metadata\.x/,
    ],
    ['an Invalid Date', new Date('nope'), /metadata\.x is an Invalid Date/],
    [
      'a Date after 9999',
      new Date(LAST_STORABLE + 1),
      /metadata\.x is Date\(\+010000-01-01T00:00:00\.000Z\), outside years 1–9999/,
    ],
    [
      'a Date BC',
      new Date('-000050-01-01T00:00:00.000Z'),
      /metadata\.x is Date\(-000050-01-01T00:00:00\.000Z\), outside years 1–9999/,
    ],
    [
      'a URLSearchParams',
      new URLSearchParams('a=1'),
      /metadata\.x is a URLSearchParams instance without a single own enumerable field/,
    ],
    ['a lone surrogate', 'a\uD800', /metadata\.x contains a lone UTF-16 surrogate/],
  ] as Array<[string, unknown, RegExp]>
).map(([label, value, message]) => ({
  name: `ctx.metadata.set('x', ${label})`,
  body: setTo(value),
  message: new RegExp(`^ctx\\.metadata\\.set\\(\\) ${message.source}`),
}));

const verbCases: StepCase[] = [
  {
    name: 'ctx.metadata.set(42, 1), a key that is not a string',
    body: setTo(1, 42 as never),
    message: /^ctx\.metadata\.set\(key, value\) takes a string key, but got 42\./,
  },
  {
    name: "ctx.reattempt({ wait: '500000 weeks' }), due after 9999",
    body: (ctx) => ctx.reattempt({ wait: '500000 weeks' }),
    message:
      /^ctx\.reattempt\(\{ wait \}\) is '500000 weeks', which would make the step due on \+\d{6}-.*, after 9999-12-31T23:59:59\.999Z.*use a shorter wait/,
  },
  {
    name: 'ctx.reattempt({ wait: 1e300 })',
    body: (ctx) => ctx.reattempt({ wait: 1e300 }),
    message:
      /^ctx\.reattempt\(\{ wait \}\) is 1e\+300, which would make the step due beyond the range/,
  },
  {
    name: "ctx.reattempt({ wait: '1000…0ms' }), 401 digits, more than a number holds",
    body: (ctx) => ctx.reattempt({ wait: `1${'0'.repeat(400)}ms` }),
    message: /^ctx\.reattempt\(\{ wait \}\) takes a duration/,
  },
  {
    name: "ctx.reattempt({ wait: '7200' }), a bare number string",
    body: (ctx) => ctx.reattempt({ wait: '7200' as never }),
    message: /^ctx\.reattempt\(\{ wait \}\) takes a duration .* but got '7200'/,
  },
  {
    name: "ctx.reattempt('5m'), options as a string",
    body: (ctx) => ctx.reattempt('5m' as never),
    message: /^ctx\.reattempt\(\) takes options \{ wait\?, rewind\? \}, but got '5m'/,
  },
  {
    name: "ctx.reattempt({ delay: '5m' }), a misspelt key",
    body: (ctx) => ctx.reattempt({ delay: '5m' } as never),
    message: /^ctx\.reattempt\(\) got unknown option\(s\) delay\. Allowed: wait, rewind\./,
  },
  {
    name: "ctx.reattempt({ rewind: 'yes' })",
    body: (ctx) => ctx.reattempt({ rewind: 'yes' as never }),
    message: /^ctx\.reattempt\(\{ rewind \}\) takes a boolean, but got 'yes'/,
  },
  {
    name: "ctx.suspend({ wait: '500000 weeks' }) in a resumable step",
    body: (ctx) => ctx.suspend({ wait: '500000 weeks' }),
    message:
      /^ctx\.suspend\(\{ wait \}\) is '500000 weeks', which would make the step due on \+\d{6}-/,
    resumable: true,
  },
  {
    name: "ctx.suspend({ wait: 'soon' }) in a resumable step",
    body: (ctx) => ctx.suspend({ wait: 'soon' as never }),
    message: /^ctx\.suspend\(\{ wait \}\) takes a duration .* but got 'soon'/,
    resumable: true,
  },
];

describe(`bad input inside a step: InvalidArgumentError to the policy, nothing written (${testDatabaseLabel} + BullMQ)`, () => {
  let harness: EngineHarness;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [InputLimitsWorkflow, ResumableInputLimitsWorkflow],
    });
  });

  afterAll(async () => {
    log.print();
    await harness?.close();
  });

  it.each([...metadataCases, ...verbCases])(
    '$name → InvalidArgumentError; paused, the bad value never stored',
    async ({ name, body, message, resumable }) => {
      const run = (ctx: StepContext<null>) => {
        ctx.metadata.set('kept', 1);
        return body(ctx);
      };
      inputLimitScript.body = run;
      inputLimitScript.walk = async (_iter, ctx) => {
        await run(ctx);
      };
      const workflow = await harness.service.start(
        resumable ? ResumableInputLimitsWorkflow : InputLimitsWorkflow,
      );
      await harness.waitForState(workflow.id, 'paused');
      const history = await harness.history(workflow.id);
      expect(history).toHaveLength(1);
      const [execution] = history;
      log.record('step', name, `${execution.errorClassName}: ${execution.errorMessage}`);
      expect([execution.state, execution.outcome]).toEqual(['failed', 'failed']);
      expect(execution.errorClassName).toBe(InvalidArgumentError.name);
      expect(execution.errorMessage).toMatch(message);
      expect(execution.metadata?.user).toStrictEqual({ kept: 1 });
      expect(execution.metadata?.reattemptReason).toBeUndefined();
      expect(await harness.service.currentExecution(workflow)).toBeNull();
    },
  );
});
