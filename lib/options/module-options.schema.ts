import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  Matches,
  Min,
  ValidateIf,
  ValidateNested,
  registerDecorator,
  type ValidationOptions,
} from 'class-validator';
import { isDuration, parseDurationOrNull } from '../common/duration';

/** A key is valid when `test` passes; the message names the key and what it takes. */
function Satisfies(
  test: (value: unknown) => boolean,
  expectation: string,
  options?: ValidationOptions,
) {
  return (object: object, propertyName: string) =>
    registerDecorator({
      name: 'satisfies',
      target: object.constructor,
      propertyName,
      options: { message: `${propertyName} must be ${expectation}`, ...options },
      validator: { validate: (value: unknown) => test(value) },
    });
}

/**
 * The key may be omitted, but an explicit `null` is validated like any other value (and so
 * refused): class-validator's `@IsOptional()` would let `null` through.
 */
const IsOptionalKey = (): PropertyDecorator => ValidateIf((_object, value) => value !== undefined);

const TRANSPORTS = ['redis', 'postgres', 'local'];

/** The key may be omitted or `null` (documented as "null disables"). */
const IsNullableKey = (): PropertyDecorator =>
  ValidateIf((_object, value) => value !== undefined && value !== null);

const isQueueName = (name: string): boolean => name.length > 0 && !name.includes(':');

/** `{ [queueName]: { concurrency?: positive integer } }`, nothing else. */
function isQueuesRecord(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.entries(value as Record<string, unknown>).every(([name, options]) => {
    if (!isQueueName(name) || typeof options !== 'object' || options === null) return false;
    if (Array.isArray(options)) return false;
    const { concurrency, ...rest } = options as Record<string, unknown>;
    return (
      Object.keys(rest).length === 0 &&
      (concurrency === undefined || (Number.isInteger(concurrency) && (concurrency as number) > 0))
    );
  });
}

export class HousekeepingOptionsSchema {
  @IsOptionalKey() @IsBoolean() enabled?: boolean;
  @IsOptionalKey() @IsString() cron?: string;
  @IsNullableKey()
  @Satisfies(isDuration, "a duration (ms or a string such as '30d') or null")
  deleteCompletedWorkflowsAfter?: unknown;
  @IsOptionalKey()
  @Satisfies(isDuration, "a duration such as '1h'")
  stuckInProgressThreshold?: unknown;
  @IsOptionalKey()
  @Satisfies(isDuration, "a duration such as '15m'")
  stuckScheduledThreshold?: unknown;
  @IsOptionalKey() @IsIn(['reattempt', 'cancel']) stuckRecoveryAction?: string;
  @IsOptionalKey() @IsInt() @Min(1) batchSize?: number;
  @IsOptionalKey()
  @Satisfies(isDuration, "a duration such as '4m'")
  maxRunDuration?: unknown;
  @IsOptionalKey() @IsBoolean() reconcileScheduledJobs?: boolean;
}

/**
 * class-validator shape of `GenevaDriveModuleOptions`. Validated with `whitelist` and
 * `forbidNonWhitelisted`, so every key must be declared here.
 */
export class ModuleOptionsSchema {
  /** Passed to ioredis as given; only the types of host, port and db are checked. */
  @IsOptionalKey()
  @IsObject()
  @Satisfies((value) => {
    const { host, port, db } = (value ?? {}) as Record<string, unknown>;
    return (
      (host === undefined || typeof host === 'string') &&
      (port === undefined ||
        (Number.isInteger(port) && (port as number) >= 0 && (port as number) <= 65535)) &&
      (db === undefined || Number.isInteger(db))
    );
  }, 'an ioredis options object (host: string, port: an integer 0..65535, db: an integer)')
  connection?: Record<string, unknown>;
  @IsOptionalKey()
  @IsString()
  @Matches(/^[^:]+$/, { message: 'prefix must not contain ":" and must not be empty' })
  prefix?: string;
  @IsOptionalKey()
  @IsString()
  @Matches(/\S/, {
    message: 'dataSource must name a TypeORM data source (omit it for the default one)',
  })
  dataSource?: string;

  @IsOptionalKey()
  @Satisfies(
    isQueuesRecord,
    "a record of queue names (no ':') to { concurrency?: positive integer }",
  )
  queues?: unknown;

  @IsOptionalKey()
  @IsString()
  @Matches(/^[^:]+$/, { message: 'defaultQueue must not contain ":" and must not be empty' })
  defaultQueue?: string;
  @IsOptionalKey()
  @IsIn(TRANSPORTS, {
    message: `transport must be one of ${TRANSPORTS.map((t) => `'${t}'`).join(', ')}`,
  })
  transport?: string;
  @IsOptionalKey() @IsBoolean() worker?: boolean;
  @IsOptionalKey() @IsBoolean() enqueueAfterCommit?: boolean;

  @IsOptionalKey()
  @IsObject({ message: 'housekeeping must be an options object' })
  @ValidateNested()
  @Type(() => HousekeepingOptionsSchema)
  housekeeping?: HousekeepingOptionsSchema;

  @IsOptionalKey() @IsInt() @Min(0) maxChainedSteps?: number;
  @IsOptionalKey() @IsBoolean() preparedStatements?: boolean;
  @IsNullableKey() @IsInt() @Min(1) maxCursorSize?: number | null;
  @IsNullableKey() @IsInt() @Min(1) maxSignalPayloadSize?: number | null;
  @IsNullableKey()
  @Satisfies(isDuration, "a duration such as '7d' or null")
  waitingVisibilityThreshold?: unknown;
  @IsNullableKey()
  @Satisfies(
    (value) => (parseDurationOrNull(value) ?? 0) > 0,
    "a positive duration such as '30d' or null",
  )
  signalRetention?: unknown;

  @IsOptionalKey()
  @Satisfies((value) => typeof value === 'function', 'a function (error, context) => void')
  errorReporter?: unknown;
  @IsOptionalKey()
  @Satisfies(
    (value) =>
      typeof (value as { gauge?: unknown } | null)?.gauge === 'function' &&
      ['undefined', 'function'].includes(typeof (value as { histogram?: unknown }).histogram),
    'an object with gauge(name, value, tags?) and optionally histogram(name, value, tags?)',
  )
  metrics?: unknown;
  @IsOptionalKey()
  @Satisfies(
    (value) =>
      ['log', 'error', 'warn'].every(
        (method) => typeof (value as Record<string, unknown> | null)?.[method] === 'function',
      ),
    'a Nest LoggerService (log, error, warn)',
  )
  logger?: unknown;
  @IsOptionalKey() @IsBoolean() allowUnsupportedVersions?: boolean;
  @IsOptionalKey() @IsBoolean() tracing?: boolean;
  @IsOptionalKey()
  @Satisfies(isClsOption, '{ keys: [...] }, a non-empty array of distinct non-empty strings')
  cls?: unknown;
}

/** `cls: { keys }`: distinct non-empty strings, at least one, nothing else. */
function isClsOption(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const { keys, ...rest } = value as Record<string, unknown>;
  return (
    Object.keys(rest).length === 0 &&
    Array.isArray(keys) &&
    keys.length > 0 &&
    keys.every((key) => typeof key === 'string' && key.length > 0) &&
    new Set(keys).size === keys.length
  );
}
