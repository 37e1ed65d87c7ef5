import type { ValueTransformer } from 'typeorm';

/**
 * Cursor values are JSON, except that a `Date` is stored tagged as `{ "$date": iso }` and revived
 * as a `Date`, so a date cursor never comes back as a string.
 */
export const cursorTransformer: ValueTransformer = {
  to(value: unknown): unknown {
    return value === undefined ? undefined : tagDates(value);
  },
  from(value: unknown): unknown {
    return value === null || value === undefined ? null : reviveDates(value);
  },
};

function tagDates(value: unknown): unknown {
  if (value instanceof Date) return { $date: value.toISOString() };
  if (Array.isArray(value)) return value.map(tagDates);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = tagDates(inner);
    return out;
  }
  return value;
}

function reviveDates(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reviveDates);
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record);
    if (keys.length === 1 && keys[0] === '$date' && typeof record.$date === 'string') {
      return new Date(record.$date);
    }
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(record)) out[key] = reviveDates(inner);
    return out;
  }
  return value;
}
