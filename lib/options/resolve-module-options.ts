import { plainToInstance } from 'class-transformer';
import { getMetadataStorage, validateSync, type ValidationError } from 'class-validator';
import { parseDuration } from '../common/duration';
import { isPlainObject } from '../common/input-guards';
import { DEFAULT_PREFIX, DEFAULT_QUEUE_NAME } from '../common/constants';
import { ModuleOptionsError } from '../errors/module-options.error';
import type {
  GenevaDriveModuleOptions,
  GenevaDriveTransport,
  GenevaDriveQueueOptions,
} from '../interfaces/module-options.interface';
import { HousekeepingOptionsSchema, ModuleOptionsSchema } from './module-options.schema';
import type { ResolvedGenevaDriveOptions } from './resolved-options.interface';
import { unknownOptionProblem } from './unknown-option';

const DEFAULT_CONCURRENCY = 10;
const DEFAULT_MAX_CHAINED_STEPS = 100;
/** How long one job may run a workflow's steps in process before its slot goes back to the queue. */
const STEP_CHAIN_TIME_SLICE_MS = 1_000;
/**
 * `GENEVA_DRIVE_WORKER=off` turns the worker off whatever the options say: the `geneva-drive`
 * CLI sets it before it boots the app's module, so an operator's command never consumes jobs.
 */
export const WORKER_ENV_VARIABLE = 'GENEVA_DRIVE_WORKER';

/** The queues a process consumes when none are configured. */
export function defaultQueues(
  queues: Record<string, GenevaDriveQueueOptions> | undefined,
): Record<string, Required<GenevaDriveQueueOptions>> {
  const given = queues ?? { [DEFAULT_QUEUE_NAME]: {} };
  return Object.fromEntries(
    Object.entries(given).map(([name, options]) => [
      name,
      { concurrency: options?.concurrency ?? DEFAULT_CONCURRENCY },
    ]),
  );
}

/**
 * Validates module options (unknown keys rejected) and applies every default in one place.
 * Throws `ModuleOptionsError` naming every offending key.
 */
export function resolveModuleOptions(
  options: GenevaDriveModuleOptions | undefined,
  source = 'GenevaDriveModule.forRoot()',
  env: NodeJS.ProcessEnv = process.env,
): ResolvedGenevaDriveOptions {
  const raw = options ?? {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ModuleOptionsError(`${source} expects an options object.`);
  }
  // Own keys that no schema declares, checked on the raw object too: class-transformer lets
  // names such as `constructor` and `__proto__` slip past `forbidNonWhitelisted`.
  const strays = [
    ...strayKeys(raw, ModuleOptionsSchema, ''),
    ...(typeof raw.housekeeping === 'object' &&
    raw.housekeeping !== null &&
    !Array.isArray(raw.housekeeping)
      ? strayKeys(raw.housekeeping, HousekeepingOptionsSchema, 'housekeeping.')
      : []),
  ];
  // A connection may be an ioredis client (a Cluster, say): it is passed on as given, and only
  // its plain-object form is checked (class-transformer cannot copy a live client).
  const schema = plainToInstance(ModuleOptionsSchema, {
    ...raw,
    connection: isPlainObject(raw.connection) ? raw.connection : clientStandIn(raw.connection),
  });
  const errors = validateSync(schema, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0 || strays.length > 0) {
    const problems = [...new Set([...strays, ...flatten(errors)])].join('; ');
    throw new ModuleOptionsError(`${source} has invalid options: ${problems}.`);
  }
  const prefix = raw.prefix ?? DEFAULT_PREFIX;
  if (isClusterClient(raw.connection) && !/\{[^{}]+\}/.test(prefix)) {
    throw new ModuleOptionsError(
      `${source}: the connection is a Redis Cluster, and the prefix '${prefix}' has no hash tag, so a ` +
        "queue's keys would land on different nodes (BullMQ's scripts then fail with CROSSSLOT). " +
        `Put the prefix in braces: prefix: '{${prefix}}'.`,
    );
  }
  const workerOff = workerTurnedOff(env);
  const transport = resolveTransport(raw, source, workerOff);
  const housekeeping = raw.housekeeping ?? {};
  const deleteAfter = housekeeping.deleteCompletedWorkflowsAfter;
  const visibility = raw.waitingVisibilityThreshold;
  return {
    // On PostgreSQL, {} stands for the TypeORM data source's database.
    connection:
      raw.connection ?? (transport === 'postgres' ? {} : { host: '127.0.0.1', port: 6379 }),
    prefix,
    dataSource: raw.dataSource,
    queues: defaultQueues(raw.queues),
    defaultQueue: raw.defaultQueue ?? DEFAULT_QUEUE_NAME,
    transport,
    worker: workerOff ? false : (raw.worker ?? true),
    enqueueAfterCommit: raw.enqueueAfterCommit ?? true,
    preparedStatements: raw.preparedStatements ?? false,
    stepChaining: {
      maxSteps: raw.maxChainedSteps ?? DEFAULT_MAX_CHAINED_STEPS,
      maxDurationMs: STEP_CHAIN_TIME_SLICE_MS,
    },
    housekeeping: {
      enabled: housekeeping.enabled ?? true,
      cron: housekeeping.cron ?? '*/5 * * * *',
      deleteCompletedWorkflowsAfterMs:
        deleteAfter === null
          ? null
          : parseDuration(deleteAfter ?? '30d', 'deleteCompletedWorkflowsAfter'),
      stuckInProgressThresholdMs: parseDuration(
        housekeeping.stuckInProgressThreshold ?? '1h',
        'stuckInProgressThreshold',
      ),
      stuckScheduledThresholdMs: parseDuration(
        housekeeping.stuckScheduledThreshold ?? '15m',
        'stuckScheduledThreshold',
      ),
      stuckRecoveryAction: housekeeping.stuckRecoveryAction ?? 'reattempt',
      batchSize: housekeeping.batchSize ?? 1000,
      maxRunDurationMs: parseDuration(housekeeping.maxRunDuration ?? '4m', 'maxRunDuration'),
      reconcileScheduledJobs: housekeeping.reconcileScheduledJobs ?? true,
    },
    maxCursorSize: raw.maxCursorSize === undefined ? 131072 : raw.maxCursorSize,
    maxSignalPayloadSize:
      raw.maxSignalPayloadSize === undefined ? 131072 : raw.maxSignalPayloadSize,
    waitingVisibilityThresholdMs:
      visibility === null ? null : parseDuration(visibility ?? '7d', 'waitingVisibilityThreshold'),
    signalRetentionMs:
      raw.signalRetention === undefined || raw.signalRetention === null
        ? null
        : parseDuration(raw.signalRetention, 'signalRetention'),
    errorReporter: raw.errorReporter ?? null,
    metrics: raw.metrics ?? null,
    logger: raw.logger ?? null,
    allowUnsupportedVersions: raw.allowUnsupportedVersions ?? false,
    tracing: raw.tracing ?? false,
    clsKeys: raw.cls ? [...raw.cls.keys] : [],
  };
}

/** Whether `GENEVA_DRIVE_WORKER=off` is set; any other value than `off` (or empty) is refused. */
function workerTurnedOff(env: NodeJS.ProcessEnv): boolean {
  const value = env[WORKER_ENV_VARIABLE];
  if (value === undefined || value === '') return false;
  if (value === 'off') return true;
  throw new ModuleOptionsError(
    `${WORKER_ENV_VARIABLE} is '${value}', but the only value it takes is 'off' (no worker in this process, whatever the worker option says). Unset it to follow the option.`,
  );
}

/** The transport, with the combinations that cannot work refused by name. */
function resolveTransport(
  raw: GenevaDriveModuleOptions,
  source: string,
  workerOff: boolean,
): GenevaDriveTransport {
  const transport = raw.transport ?? 'redis';
  if (transport === 'postgres' && raw.connection !== undefined && !isPlainObject(raw.connection)) {
    throw new ModuleOptionsError(
      `${source}: transport 'postgres' takes connection as a node-postgres pool config ` +
        '({ connectionString } or host, port, user, password, database), not a Redis client. ' +
        "Omit connection to use the TypeORM data source's database.",
    );
  }
  if (transport === 'local' && raw.worker === false) {
    throw new ModuleOptionsError(
      `${source}: transport 'local' runs steps in this process only, so worker: false would leave ` +
        "every step unrun. Drop worker: false, or use transport 'redis' to run workers elsewhere.",
    );
  }
  if (transport === 'local' && workerOff) {
    throw new ModuleOptionsError(
      `${source}: transport 'local' runs steps in this process only, so it cannot run with ` +
        `${WORKER_ENV_VARIABLE}=off (set by the geneva-drive CLI): the steps the command schedules ` +
        "would never run. Operate a 'local' app from inside it (WorkflowService), or switch it to transport 'redis'.",
    );
  }
  return transport;
}

/** The properties a schema class declares (those class-validator knows of). */
function knownKeys(schema: new () => object): string[] {
  return [
    ...new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(schema, '', true, false)
        .map((metadata) => metadata.propertyName),
    ),
  ];
}

function strayKeys(value: object, schema: new () => object, path: string): string[] {
  const known = knownKeys(schema);
  return Object.keys(value)
    .filter((key) => !known.includes(key))
    .map((key) => unknownOptionProblem(path, key, known));
}

function flatten(errors: ValidationError[], path = ''): string[] {
  return errors.flatMap((error) => {
    const key = path ? `${path}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) =>
      message.startsWith(`property ${error.property} should not exist`)
        ? unknownOptionProblem(
            path ? `${path}.` : '',
            error.property,
            // The object holding the key is an instance of its schema class (plainToInstance).
            error.target ? knownKeys(error.target.constructor as new () => object) : [],
          )
        : `${key}: ${message}`,
    );
    return [...own, ...flatten(error.children ?? [], key)];
  });
}

/** What validation sees of a connection that is not a plain options object. */
function clientStandIn(connection: unknown): unknown {
  return typeof connection === 'object' && connection !== null ? {} : connection;
}

/** An ioredis `Cluster` (it says so with `isCluster`). */
function isClusterClient(connection: unknown): boolean {
  return (
    typeof connection === 'object' &&
    connection !== null &&
    (connection as { isCluster?: unknown }).isCluster === true
  );
}
