import {
  IsDate,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  Min,
  validateSync,
} from 'class-validator';
import { StepConfigurationError } from '../errors/step-configuration.error';
import type { StepJobOptions } from '../interfaces/job-options.interface';
import { formatValue, parseDurationOrNull } from './duration';
import { dueTimeProblem, storedDateProblem } from './input-guards';

const JOB_OPTION_KEYS = ['queue', 'priority', 'wait', 'waitUntil'];

/** class-validator shape of `StepJobOptions`; `wait` is checked by the duration grammar. */
class StepJobOptionsShape {
  @IsOptional()
  @IsString()
  @Matches(/^[^:]+$/, { message: 'queue must be a non-empty name without ":" (BullMQ refuses it)' })
  queue?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(2_097_151)
  priority?: number;

  @IsOptional()
  @IsDate()
  waitUntil?: Date;
}

/**
 * Validates step job options given at `level` (e.g. "OrderWorkflow step 'ship' jobOptions"),
 * throwing `StepConfigurationError` naming the key and the level. Returns a normalized copy.
 * `wait` and `waitUntil` set a step's `scheduled_for` (SPEC §14.13), so both must keep it within
 * years 1–9999 (§16.1): a `waitUntil` outside them, or a `wait` that ends after 9999-12-31 from
 * now, is refused like an Invalid Date.
 */
export function validateStepJobOptions(value: unknown, level: string): StepJobOptions {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new StepConfigurationError(
      `${level} must be an object with any of ${JOB_OPTION_KEYS.join(', ')}, but was ${formatValue(value)}.`,
    );
  }
  const record = value as Record<string, unknown>;
  const unknown = Object.keys(record).filter((key) => !JOB_OPTION_KEYS.includes(key));
  if (unknown.length > 0) {
    throw new StepConfigurationError(
      `${level} has unknown job option key(s): ${unknown.join(', ')}. Allowed keys: ${JOB_OPTION_KEYS.join(', ')}.`,
    );
  }
  const shape = Object.assign(new StepJobOptionsShape(), record);
  const problems = validateSync(shape).flatMap((error) =>
    Object.values(error.constraints ?? {}).map(
      () => `${error.property}: ${formatValue(error.value)}`,
    ),
  );
  if (record.wait !== undefined && record.wait !== null) {
    const waitMs = parseDurationOrNull(record.wait);
    const beyond = waitMs === null ? null : dueTimeProblem(waitMs);
    if (waitMs === null) problems.push(`wait: ${formatValue(record.wait)}`);
    else if (beyond) problems.push(`wait: ${formatValue(record.wait)} (${beyond})`);
  }
  if (record.waitUntil instanceof Date && !Number.isNaN(record.waitUntil.getTime())) {
    // IsDate() took it (an Invalid Date is already listed); the range is the library's.
    if (storedDateProblem(record.waitUntil)) {
      problems.push(
        `waitUntil: ${formatValue(record.waitUntil)} (outside years 1–9999: the library stores dates from 0001-01-01 to 9999-12-31 (UTC) only)`,
      );
    }
  }
  if (problems.length > 0) {
    throw new StepConfigurationError(
      `${level} has invalid job option value(s): ${[...new Set(problems)].join('; ')}. ` +
        'Expected queue: a name without ":", priority: an integer 1..2097151, ' +
        'wait: a duration ending by 9999-12-31, waitUntil: a Date within years 1–9999.',
    );
  }
  const normalized: StepJobOptions = {};
  for (const key of JOB_OPTION_KEYS as Array<keyof StepJobOptions>) {
    // null means "not set" at every level, as in the gem; it is left out of the result.
    if (record[key] !== undefined && record[key] !== null) {
      (normalized as Record<string, unknown>)[key] = record[key];
    }
  }
  return normalized;
}
