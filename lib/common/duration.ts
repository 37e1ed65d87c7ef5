import type { Duration } from '../interfaces/states.interface';
import { describeValue, dueTimeProblem } from './input-guards';

const UNIT_MS: Record<string, number> = {
  ms: 1,
  millisecond: 1,
  s: 1000,
  second: 1000,
  m: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  w: 604_800_000,
  week: 604_800_000,
};

const DURATION_PATTERN =
  /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)$/i;

/** True for a finite number >= 0 or a string of the duration grammar (`'30s'`, `'2 days'`). */
export function isDuration(value: unknown): value is Duration {
  return parseDurationOrNull(value) !== null;
}

/**
 * Milliseconds of a duration, or null when the value is not one. A string whose digits make no
 * finite number of milliseconds (`'1' + '0'.repeat(400) + 'ms'`) is not a duration either.
 */
export function parseDurationOrNull(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : null;
  if (typeof value !== 'string') return null;
  const match = DURATION_PATTERN.exec(value.trim());
  if (!match) return null;
  const unit = match[2].toLowerCase();
  const singular = unit.length > 2 && unit.endsWith('s') ? unit.slice(0, -1) : unit;
  const ms = Math.round(Number(match[1]) * UNIT_MS[singular]);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * Why `value` cannot be the wait of a flow-control verb called at `now` (`ctx.reattempt({ wait })`,
 * `ctx.suspend({ wait })`, `iter.skipTo(cursor, { wait })`), or null: it must be a duration, and
 * the step it delays must fall due by 9999-12-31T23:59:59.999Z, the last date the library stores
 * (`'500000 weeks'` from now does not). The phrase follows the option's name:
 * "ctx.reattempt({ wait }) takes a duration …".
 */
export function waitProblem(value: unknown, now: number = Date.now()): string | null {
  const ms = parseDurationOrNull(value);
  if (ms === null) {
    return `takes a duration (ms or a string such as '30s'), but got ${describeValue(value)}`;
  }
  const problem = dueTimeProblem(ms, now);
  return problem
    ? `is ${describeValue(value)}, which ${problem}; use a shorter wait, or pause the workflow instead`
    : null;
}

/**
 * Milliseconds of a duration. `describe` names the place the value came from, so the error says
 * where to look.
 */
export function parseDuration(value: unknown, describe: string): number {
  const ms = parseDurationOrNull(value);
  if (ms === null) {
    throw new TypeError(
      `${describe} is not a duration: ${formatValue(value)}. Use milliseconds (a finite number >= 0) or a string such as '30s', '5m', '2h', '7d' or '2 days'.`,
    );
  }
  return ms;
}

/** A short, quoted rendering of a value for error messages. */
export function formatValue(value: unknown): string {
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'function') return `function ${value.name || '(anonymous)'}`;
  if (value instanceof Date) {
    return Number.isNaN(value.getTime()) ? 'Invalid Date' : `Date(${value.toISOString()})`;
  }
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
