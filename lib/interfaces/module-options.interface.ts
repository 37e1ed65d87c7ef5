import type {
  InjectionToken,
  LoggerService,
  ModuleMetadata,
  OptionalFactoryDependency,
  Type,
} from '@nestjs/common';
import type { Duration } from './states.interface';

/** Housekeeping schedule and thresholds. */
export interface HousekeepingOptions {
  /** default true */
  enabled?: boolean;
  /** default '*\/5 * * * *' */
  cron?: string;
  /** default '30d'; null disables cleanup */
  deleteCompletedWorkflowsAfter?: Duration | null;
  /** default '1h' */
  stuckInProgressThreshold?: Duration;
  /** default '15m' */
  stuckScheduledThreshold?: Duration;
  /** default 'reattempt' */
  stuckRecoveryAction?: 'reattempt' | 'cancel';
  /** default 1000 */
  batchSize?: number;
  /**
   * default '4m'. How long one housekeeping run may work before it stops at the end of the current
   * batch (the next run starts over), so a run over a backlog of millions of rows ends before the
   * next tick. Cleanup may use half of it, so recovery always gets its turn. Keep it below the
   * cron interval.
   */
  maxRunDuration?: Duration;
  /**
   * default true. Each housekeeping run first compares the `scheduled` executions of ready and
   * performing workflows with the queue's jobs and re-enqueues those whose job is gone (a Redis
   * flush or restart, a job that ran before its row was visible), instead of waiting for
   * `stuckScheduledThreshold`. Also available on demand: `HousekeepingService.reconcileScheduledJobs()`.
   */
  reconcileScheduledJobs?: boolean;
}

/** What `errorReporter` receives beside the error. Unknown values are null. */
export interface ErrorReportContext {
  workflowId: string;
  workflowClass: string;
  stepExecutionId: string | null;
  stepName: string | null;
  heroType: string | null;
  heroId: string | null;
}

/** The port of `Rails.error.report`. */
export type ErrorReporter = (error: Error, context: ErrorReportContext) => void | Promise<void>;

/** Receives the housekeeping gauges. */
export interface GaugeReporter {
  gauge(name: string, value: number, tags?: Record<string, string>): void;
  /**
   * 0.2 (SPEC §16.6), optional: one observation of a distribution, in ms —
   * `geneva_drive.step.duration_ms`, `geneva_drive.step.queue_delay_ms` (due → started) and
   * `geneva_drive.signal.wake_ms` (signal stored → woken step started).
   */
  histogram?(name: string, value: number, tags?: Record<string, string>): void;
}

/** BullMQ / ioredis connection options (only the commonly used keys are spelled out). */
export interface GenevaDriveConnectionOptions {
  host?: string;
  port?: number;
  username?: string;
  password?: string;
  db?: number;
  [key: string]: unknown;
}

/**
 * A Redis client the application created: an ioredis `Redis` or `Cluster` (`new Cluster(nodes)`
 * for Redis Cluster). BullMQ uses it as given and duplicates it for its blocking connections; the
 * application closes it (`quit()`) after the Nest app has closed. Spelled out by shape, the way
 * BullMQ recognises a client, so the library's types do not depend on ioredis.
 */
export interface GenevaDriveRedisClient {
  connect(...args: never[]): unknown;
  disconnect(...args: never[]): unknown;
  duplicate(...args: never[]): unknown;
}

/** Per-queue worker settings. */
export interface GenevaDriveQueueOptions {
  /** default 10 */
  concurrency?: number;
}

/**
 * Where step jobs travel: `'redis'` (BullMQ on Redis, the default), `'postgres'` (BullMQ 6's
 * PostgreSQL backend, no Redis) or `'local'` (in this process, no Redis: one process only,
 * durable through the database).
 */
export type GenevaDriveTransport = 'redis' | 'postgres' | 'local';

/** Options of `GenevaDriveModule.forRoot()`. Every key is optional. */
export interface GenevaDriveModuleOptions {
  /**
   * default 'redis'. `'local'` runs every step in this process, needs no Redis and ignores
   * `connection` and `prefix`; it cannot be combined with `worker: false`, and exactly one process
   * may run a deployment with it (see the README, "Transports").
   */
  transport?: GenevaDriveTransport;
  /**
   * default { host: '127.0.0.1', port: 6379 }. Connection options, or an ioredis client (a
   * `Cluster` for Redis Cluster, with a prefix in braces). With `transport: 'postgres'`: a
   * node-postgres pool config (`{ connectionString }`, or host, port, user, password, database;
   * `schema` too), default the TypeORM data source's database.
   */
  connection?: GenevaDriveConnectionOptions | GenevaDriveRedisClient;
  /** BullMQ key prefix, default 'geneva-drive'; with `transport: 'postgres'`, the schema of BullMQ's tables */
  prefix?: string;
  /** TypeORM data source name, default: the default data source */
  dataSource?: string;
  /** queues consumed by this process, default { 'geneva-drive': { concurrency: 10 } } */
  queues?: Record<string, GenevaDriveQueueOptions>;
  /** default 'geneva-drive' */
  defaultQueue?: string;
  /** whether this process runs workers, default true */
  worker?: boolean;
  /** default true */
  enqueueAfterCommit?: boolean;
  housekeeping?: HousekeepingOptions;
  /**
   * Steps a worker runs in process right after the job's own step, when the next step is due at
   * once on the same queue and priority and waits for no signal (one commit and no queue hop
   * between them); a chain also yields its slot after 1 s. Default 25; 0 enqueues every step.
   */
  maxChainedSteps?: number;
  /**
   * PostgreSQL: the runner names its statements (protocol-level named statements, parsed once per
   * connection and reused) so the server skips parsing and planning them. Default false: every
   * statement is unnamed and nothing stays on a server connection, which is what a pooler in
   * transaction mode needs (PgBouncer before 1.21, or without `max_prepared_statements`). Set true
   * on direct connections, or behind PgBouncer ≥ 1.21 with `max_prepared_statements` set.
   */
  preparedStatements?: boolean;
  /** bytes of serialized JSON, default 131072; null disables */
  maxCursorSize?: number | null;
  /** bytes of serialized JSON, default 131072; null disables */
  maxSignalPayloadSize?: number | null;
  /** default '7d'; null disables the overdue gauge */
  waitingVisibilityThreshold?: Duration | null;
  /**
   * How long an unmatched (`pending`) signal is kept: housekeeping deletes older ones (never
   * claimed or consumed signals). Default null: pending signals live as long as their workflow.
   */
  signalRetention?: Duration | null;
  /** default: logs with the Nest Logger */
  errorReporter?: ErrorReporter;
  /** default: no-op */
  metrics?: GaugeReporter;
  /** default: Nest's Logger */
  logger?: LoggerService;
  /**
   * 0.2 (SPEC §16.6): a span per step attempt (`geneva_drive.step`, linked to the `start()` call's
   * span) and spans for `start()`, `startMany()` and `signal()`, through `@opentelemetry/api` (an
   * optional peer: install it). Default false.
   */
  tracing?: boolean;
  /**
   * 0.2 (SPEC §16.6): these keys of the caller's nestjs-cls store are captured at `start()` (into
   * the workflow's context) and set again in a CLS context around each step. Needs nestjs-cls.
   * Default: none.
   */
  cls?: { keys: string[] };
  /**
   * Boot with a peer package (NestJS, TypeORM, BullMQ, `@nestjs/schedule`, class-validator,
   * class-transformer) outside the versions this release supports, logging a warning instead of
   * failing with `ModuleOptionsError`. Default false. For trying a release the library was not
   * tested with; nothing is guaranteed then.
   */
  allowUnsupportedVersions?: boolean;
}

/** `useClass`/`useExisting` factories implement `create()`. */
export interface GenevaDriveOptionsFactory {
  create(): GenevaDriveModuleOptions | Promise<GenevaDriveModuleOptions>;
}

/** Options of `GenevaDriveModule.forRootAsync()`. */
export interface GenevaDriveModuleAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** The queues this process consumes, known before the factory resolves. */
  queues?: Record<string, GenevaDriveQueueOptions>;
  /**
   * The transport, known before the factory resolves (it decides which providers the module has);
   * default 'redis'. A factory that returns another `transport` fails boot.
   */
  transport?: GenevaDriveTransport;
  /** default true */
  isGlobal?: boolean;
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  useFactory?: (...args: any[]) => GenevaDriveModuleOptions | Promise<GenevaDriveModuleOptions>;
  useClass?: Type<GenevaDriveOptionsFactory>;
  useExisting?: Type<GenevaDriveOptionsFactory>;
}
