import { StepConfigurationError } from '../../lib';
import { MAX_STORED_TIME, MIN_STORED_TIME } from '../../lib/common/input-guards';
import { validateStepJobOptions } from '../../lib/common/step-job-options.validator';

const LEVEL = "OrderWorkflow step 'ship' jobOptions";

function errorOf(value: unknown): StepConfigurationError {
  try {
    validateStepJobOptions(value, LEVEL);
  } catch (error) {
    expect(error).toBeInstanceOf(StepConfigurationError);
    return error as StepConfigurationError;
  }
  throw new Error('expected validateStepJobOptions to throw');
}

describe('validateStepJobOptions', () => {
  it('treats undefined and null as no options', () => {
    expect(validateStepJobOptions(undefined, LEVEL)).toEqual({});
    expect(validateStepJobOptions(null, LEVEL)).toEqual({});
  });

  it('accepts every key with a valid value and returns a copy', () => {
    const waitUntil = new Date('2030-01-01T00:00:00Z');
    const input = { queue: 'mail', priority: 5, wait: '10m', waitUntil };
    const result = validateStepJobOptions(input, LEVEL);
    expect(result).toEqual(input);
    expect(result).not.toBe(input);
    expect(result.waitUntil).toBe(waitUntil);
  });

  it('leaves out keys given as undefined', () => {
    expect(Object.keys(validateStepJobOptions({ queue: 'a', priority: undefined }, LEVEL))).toEqual(
      ['queue'],
    );
  });

  it('accepts null for every key (as the gem does) and leaves it out of the result', () => {
    const result = validateStepJobOptions(
      { queue: null, priority: null, wait: null, waitUntil: null },
      LEVEL,
    );
    expect(result).toEqual({});
    expect(Object.keys(result)).toEqual([]);
  });

  it.each([
    ['priority 1 (highest)', { priority: 1 }],
    ['priority 2097151 (BullMQ maximum)', { priority: 2_097_151 }],
    ['wait 0', { wait: 0 }],
    ['wait in ms', { wait: 1500 }],
    ['wait as 2 days', { wait: '2 days' }],
    ['a past waitUntil', { waitUntil: new Date(0) }],
    ['waitUntil on the first storable instant', { waitUntil: new Date(MIN_STORED_TIME) }],
    ['waitUntil on the last storable instant', { waitUntil: new Date(MAX_STORED_TIME) }],
    ['a long wait that ends by 9999-12-31', { wait: '1000 weeks' }],
  ])('accepts %s', (_, options) => {
    expect(validateStepJobOptions(options, LEVEL)).toEqual(options);
  });

  it('refuses unknown keys, naming each key, the level and the allowed keys', () => {
    const error = errorOf({ piority: 1, queue: 'a', delay: 5 });
    expect(error.message).toBe(
      `${LEVEL} has unknown job option key(s): piority, delay. Allowed keys: queue, priority, wait, waitUntil.`,
    );
  });

  it.each([
    ['a string', 'fast'],
    ['a number', 5],
    ['an array', [{ queue: 'a' }]],
    ['a function', () => ({})],
  ])('refuses %s instead of an object', (_, value) => {
    expect(errorOf(value).message).toMatch(
      new RegExp(
        `^${escape(LEVEL)} must be an object with any of queue, priority, wait, waitUntil`,
      ),
    );
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['priority as a word', { priority: 'high' }, "priority: 'high'"],
    ['priority 0', { priority: 0 }, 'priority: 0'],
    ['priority above the BullMQ maximum', { priority: 2_097_152 }, 'priority: 2097152'],
    ['a fractional priority', { priority: 1.5 }, 'priority: 1.5'],
    ['a queue name with a colon', { queue: 'a:b' }, "queue: 'a:b'"],
    ['an empty queue name', { queue: '' }, "queue: ''"],
    ['a queue that is not a string', { queue: 7 }, 'queue: 7'],
    ['a wait that is not a duration', { wait: 'later' }, "wait: 'later'"],
    ['a negative wait', { wait: -1 }, 'wait: -1'],
    ['a bare number string as wait', { wait: '7200' }, "wait: '7200'"],
    ['waitUntil as a string', { waitUntil: '2030-01-01' }, "waitUntil: '2030-01-01'"],
    ['waitUntil as a timestamp', { waitUntil: 1_900_000_000_000 }, 'waitUntil: 1900000000000'],
    ['an invalid Date', { waitUntil: new Date('nope') }, 'waitUntil: Invalid Date'],
  ])('refuses %s, naming the key, the value and the level', (_, options, expected) => {
    const { message } = errorOf(options);
    expect(message).toContain(`${LEVEL} has invalid job option value(s): `);
    expect(message).toContain(expected);
    expect(message).toContain(
      'Expected queue: a name without ":", priority: an integer 1..2097151',
    );
  });

  describe('dates outside years 1–9999 (SPEC §16.1), refused like an Invalid Date', () => {
    const RANGE =
      '(outside years 1–9999: the library stores dates from 0001-01-01 to 9999-12-31 (UTC) only)';

    it.each<[string, Date, string]>([
      [
        'a waitUntil one millisecond after 9999',
        new Date(MAX_STORED_TIME + 1),
        `waitUntil: Date(+010000-01-01T00:00:00.000Z) ${RANGE}`,
      ],
      [
        'a waitUntil one millisecond before year 1',
        new Date(MIN_STORED_TIME - 1),
        `waitUntil: Date(0000-12-31T23:59:59.999Z) ${RANGE}`,
      ],
      [
        'a waitUntil in year -271821',
        new Date(-8.64e15),
        `waitUntil: Date(-271821-04-20T00:00:00.000Z) ${RANGE}`,
      ],
    ])('refuses %s, naming the key, the value, the level and the range', (_, waitUntil, listed) => {
      const { message } = errorOf({ waitUntil });
      expect(message).toBe(
        `${LEVEL} has invalid job option value(s): ${listed}. ` +
          'Expected queue: a name without ":", priority: an integer 1..2097151, ' +
          'wait: a duration ending by 9999-12-31, waitUntil: a Date within years 1–9999.',
      );
    });

    it.each<[string, string | number, RegExp]>([
      [
        "'500000 weeks'",
        '500000 weeks',
        /wait: '500000 weeks' \(would make the step due on \+011\d{3}-[^)]*, after 9999-12-31T23:59:59\.999Z: the library stores dates from 0001-01-01 to 9999-12-31 \(UTC\) only\)/,
      ],
      [
        '1e20 ms',
        1e20,
        /wait: 100000000000000000000 \(would make the step due beyond the range of a JavaScript Date, after 9999-12-31/,
      ],
    ])(
      'refuses a wait of %s, which would make the step due after 9999-12-31',
      (_, wait, pattern) => {
        const { message } = errorOf({ wait });
        expect(message).toContain(`${LEVEL} has invalid job option value(s): wait: `);
        expect(message).toMatch(pattern);
      },
    );

    it('lists a date out of range beside the other bad values', () => {
      const { message } = errorOf({
        priority: 0,
        wait: '500000 weeks',
        waitUntil: new Date(MAX_STORED_TIME + 1),
      });
      expect(message).toContain('priority: 0; ');
      expect(message).toContain("wait: '500000 weeks' (would make the step due on ");
      expect(message).toContain(`waitUntil: Date(+010000-01-01T00:00:00.000Z) ${RANGE}`);
    });
  });

  it('lists every bad value once', () => {
    const { message } = errorOf({ priority: 'high', queue: 'a:b', wait: 'later' });
    expect(message).toContain("priority: 'high'");
    expect(message).toContain("queue: 'a:b'");
    expect(message).toContain("wait: 'later'");
    // priority 'high' breaks three constraints (IsInt, Min, Max) but is listed once.
    expect(message.match(/priority: 'high'/g)).toHaveLength(1);
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
