import {
  Inject,
  Injectable,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { ConnectionOptions } from 'bullmq';
import { Cluster } from 'ioredis';
import {
  GENEVA_DRIVE_ENTITIES,
  GENEVA_DRIVE_MIGRATIONS,
  GenevaDriveModule,
  type GenevaDriveModuleOptions,
} from '../../../lib';
import { Order } from '../../fixtures/order.entity';
import {
  RELIABILITY_SETTINGS,
  RELIABILITY_WORKFLOWS,
  ReliabilityJournal,
  type ReliabilitySettings,
} from '../../fixtures/reliability.workflows';
import { transportLabel, type ReliabilityTransport } from './reliability-transport';

/** Where a reliability app finds its PostgreSQL, Redis and BullMQ prefix. */
export interface ReliabilityTarget {
  /** Where step jobs travel: the scenario's Redis, or BullMQ's tables in its PostgreSQL. */
  transport: ReliabilityTransport;
  pgHost: string;
  pgPort: number;
  pgDatabase: string;
  /** The scenario's Redis (null on the PostgreSQL transport: the scenario runs none). */
  redisPort: number | null;
  /** The Redis on redisPort is a node of a Redis Cluster (the prefix then has a hash tag). */
  redisCluster?: boolean;
  prefix: string;
}

/**
 * BullMQ's PostgreSQL connection for an app on the PostgreSQL transport: the scenario's cluster,
 * with the app's `application_name` (suffixed) on the backend's pool, so a scenario that
 * terminates the workers' backends by name terminates their queue connections too. (BullMQ
 * renames a worker's `LISTEN` session after the queue.)
 */
export function scenarioPostgresTransportConnection(
  target: ReliabilityTarget,
  applicationName: string,
): Record<string, unknown> {
  return {
    host: target.pgHost,
    port: target.pgPort,
    user: 'postgres',
    database: target.pgDatabase,
    application_name: `${applicationName}-queue`,
    connectionTimeoutMillis: 5_000,
  };
}

/** The app's Redis connection: plain options, or an ioredis Cluster its owner must quit. */
export function scenarioRedisConnection(target: ReliabilityTarget): {
  connection: ConnectionOptions;
  release(): Promise<void>;
} {
  if (target.redisPort === null) {
    throw new Error(`this scenario runs ${transportLabel}: it has no Redis`);
  }
  if (!target.redisCluster) {
    return {
      connection: { host: '127.0.0.1', port: target.redisPort },
      release: () => Promise.resolve(),
    };
  }
  const cluster = new Cluster([{ host: '127.0.0.1', port: target.redisPort }]);
  return {
    connection: cluster,
    release: async () => {
      if (cluster.status !== 'end') await cluster.quit().catch(() => cluster.disconnect());
    },
  };
}

const REDIS_RELEASE = Symbol('REDIS_RELEASE');

/** Quits the app's Cluster client after the app's queues and workers have closed. */
@Injectable()
class RedisConnectionCloser implements OnApplicationShutdown {
  constructor(@Inject(REDIS_RELEASE) private readonly release: () => Promise<void>) {}

  onApplicationShutdown(): Promise<void> {
    return this.release();
  }
}

/** One reliability app: the parent's control app or a worker child. */
export interface ReliabilityAppOptions {
  target: ReliabilityTarget;
  /** PostgreSQL application_name of its connections (pg_terminate_backend picks them by it). */
  applicationName: string;
  worker: boolean;
  /** default true (the library's default) */
  enqueueAfterCommit?: boolean;
  concurrency: number;
  poolSize: number;
  settings: ReliabilitySettings;
  /** Runs the migrations on boot (the parent, before any worker starts). */
  migrate?: boolean;
  housekeeping?: GenevaDriveModuleOptions['housekeeping'];
  logger?: GenevaDriveModuleOptions['logger'];
  errorReporter?: GenevaDriveModuleOptions['errorReporter'];
}

@Module({})
export class ReliabilityModule {
  static forRoot(options: ReliabilityAppOptions): DynamicModule {
    const { target } = options;
    const redis =
      target.transport === 'redis'
        ? scenarioRedisConnection(target)
        : { connection: null, release: () => Promise.resolve() };
    return {
      module: ReliabilityModule,
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          host: target.pgHost,
          port: target.pgPort,
          username: 'postgres',
          database: target.pgDatabase,
          applicationName: options.applicationName,
          entities: [...GENEVA_DRIVE_ENTITIES, Order],
          migrations: GENEVA_DRIVE_MIGRATIONS,
          migrationsRun: options.migrate ?? false,
          synchronize: options.migrate ?? false,
          // The steps' connections (one each around its transactions, README "Connection pool"),
          // plus the journal's and checkpoints' writes.
          extra: { max: options.poolSize, connectionTimeoutMillis: 5_000 },
          // Reconnect patiently at boot (a restarted PostgreSQL takes a moment).
          retryAttempts: 20,
          retryDelay: 500,
        }),
        GenevaDriveModule.forRoot({
          prefix: target.prefix,
          ...(redis.connection
            ? { connection: redis.connection }
            : {
                transport: 'postgres' as const,
                connection: scenarioPostgresTransportConnection(target, options.applicationName),
              }),
          queues: { 'geneva-drive': { concurrency: options.concurrency } },
          worker: options.worker,
          enqueueAfterCommit: options.enqueueAfterCommit ?? true,
          housekeeping: { enabled: false, ...options.housekeeping },
          ...(options.logger ? { logger: options.logger } : {}),
          ...(options.errorReporter ? { errorReporter: options.errorReporter } : {}),
        }),
      ],
      providers: [
        { provide: RELIABILITY_SETTINGS, useValue: options.settings },
        ReliabilityJournal,
        ...RELIABILITY_WORKFLOWS,
        { provide: REDIS_RELEASE, useValue: () => redis.release() },
        RedisConnectionCloser,
      ],
    };
  }
}
