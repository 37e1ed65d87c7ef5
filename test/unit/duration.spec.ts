import {
  formatValue,
  isDuration,
  parseDuration,
  parseDurationOrNull,
} from '../../lib/common/duration';

describe('duration grammar (SPEC §14.3)', () => {
  describe('numbers are milliseconds', () => {
    it.each([
      [0, 0],
      [1, 1],
      [5000, 5000],
      [1.5, 1.5],
    ])('%p → %p ms', (input, expected) => {
      expect(parseDurationOrNull(input)).toBe(expected);
      expect(isDuration(input)).toBe(true);
    });

    it.each([-1, -0.5, NaN, Infinity, -Infinity])('refuses %p', (input) => {
      expect(parseDurationOrNull(input)).toBeNull();
      expect(isDuration(input)).toBe(false);
    });
  });

  describe('strings need a unit', () => {
    it.each([
      ['250ms', 250],
      ['30s', 30_000],
      ['5m', 300_000],
      ['2h', 7_200_000],
      ['7d', 604_800_000],
      ['1w', 604_800_000],
      ['1.5h', 5_400_000],
      ['0.5s', 500],
      ['0s', 0],
      ['2 days', 172_800_000],
      ['1 day', 86_400_000],
      ['10 minutes', 600_000],
      ['1 minute', 60_000],
      ['3 seconds', 3_000],
      ['1 second', 1_000],
      ['2 hours', 7_200_000],
      ['1 hour', 3_600_000],
      ['2 weeks', 1_209_600_000],
      ['1 week', 604_800_000],
      ['12 milliseconds', 12],
      ['1 millisecond', 1],
    ])('%p → %p ms', (input, expected) => {
      expect(parseDurationOrNull(input)).toBe(expected);
    });

    it.each([
      ['30S', 30_000],
      ['2 DAYS', 172_800_000],
      ['1.5H', 5_400_000],
      ['10Ms', 10],
    ])('is case-insensitive: %p → %p ms', (input, expected) => {
      expect(parseDurationOrNull(input)).toBe(expected);
    });

    it('tolerates surrounding whitespace and whitespace before the unit', () => {
      expect(parseDurationOrNull('  30s  ')).toBe(30_000);
      expect(parseDurationOrNull('30   s')).toBe(30_000);
    });

    it('distinguishes m (minutes) from ms (milliseconds)', () => {
      expect(parseDurationOrNull('5m')).toBe(300_000);
      expect(parseDurationOrNull('5ms')).toBe(5);
    });

    it('rounds fractional results to whole milliseconds', () => {
      expect(parseDurationOrNull('1.0005s')).toBe(1001);
    });

    it.each([
      'later',
      '',
      '   ',
      '7200', // a bare number string has no unit: not a duration
      '1.5',
      '-5s',
      '+5s',
      '5 s ago',
      '5 fortnights',
      '5x',
      's',
      '.5s',
      '5.s',
      '1e3ms',
      'Infinity',
      'NaN',
      '2d 3h',
      'payment_confirmed',
    ])('refuses %p', (input) => {
      expect(parseDurationOrNull(input)).toBeNull();
      expect(isDuration(input)).toBe(false);
    });
  });

  it.each([null, undefined, true, {}, [], new Date(), () => 5, 10n])(
    'refuses non-number, non-string %p',
    (input) => {
      expect(parseDurationOrNull(input)).toBeNull();
      expect(isDuration(input)).toBe(false);
    },
  );

  describe('parseDuration', () => {
    it('returns milliseconds of a valid duration', () => {
      expect(parseDuration('2 days', 'x')).toBe(172_800_000);
      expect(parseDuration(0, 'x')).toBe(0);
    });

    it('throws naming the place and the value, and showing the grammar', () => {
      expect(() => parseDuration('later', 'housekeeping.cron')).toThrow(TypeError);
      expect(() => parseDuration('later', 'housekeeping.cron')).toThrow(
        /housekeeping\.cron is not a duration: 'later'.*'30s'.*'2 days'/,
      );
      expect(() => parseDuration(-1, 'wait')).toThrow(/wait is not a duration: -1/);
    });
  });

  describe('formatValue', () => {
    it('quotes strings, names functions and dates, JSON-encodes the rest', () => {
      expect(formatValue('later')).toBe("'later'");
      expect(formatValue(function named() {})).toBe('function named');
      expect(formatValue(new Date('2024-01-02T03:04:05.000Z'))).toBe(
        'Date(2024-01-02T03:04:05.000Z)',
      );
      expect(formatValue({ a: 1 })).toBe('{"a":1}');
      expect(formatValue(undefined)).toBe('undefined');
      expect(formatValue(NaN)).toBe('null');
    });

    it('renders an invalid Date without throwing', () => {
      expect(formatValue(new Date('nope'))).toBe('Invalid Date');
    });

    it('falls back to String() for values JSON cannot encode', () => {
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      expect(formatValue(circular)).toBe('[object Object]');
      expect(formatValue(10n)).toBe('10');
    });
  });
});
