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
import { formatValue, isDuration } from './duration';

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
  if (record.wait !== undefined && record.wait !== null && !isDuration(record.wait)) {
    problems.push(`wait: ${formatValue(record.wait)}`);
  }
  if (problems.length > 0) {
    throw new StepConfigurationError(
      `${level} has invalid job option value(s): ${[...new Set(problems)].join('; ')}. ` +
        'Expected queue: a name without ":", priority: an integer 1..2097151, wait: a duration, waitUntil: a Date.',
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
