import type { GenevaDriveConnectionOptions, GenevaDriveTransport } from 'nestjs-geneva-drive';

/** Injection token of the resolved {@link SampleAppConfig}. */
export const SAMPLE_APP_CONFIG = Symbol('SAMPLE_APP_CONFIG');

/** Everything the sample app reads from its environment, resolved once at module construction. */
export interface SampleAppConfig {
  /** PostgreSQL connection string (env `DATABASE_URL`); null: SQLite in `sqliteFile`. */
  databaseUrl: string | null;
  /** The SQLite database file when there is no `DATABASE_URL` (env `SQLITE_FILE`). */
  sqliteFile: string;
  /** PostgreSQL schema holding the app's and the library's tables (env `DATABASE_SCHEMA`). */
  schema: string;
  /** Redis connection string for BullMQ (env `REDIS_URL`); null: the local transport, no Redis. */
  redisUrl: string | null;
  /** BullMQ key prefix (env `REDIS_PREFIX`); on the PostgreSQL transport, BullMQ's schema. */
  redisPrefix: string;
  /**
   * How steps travel (env `GENEVA_TRANSPORT`); null: 'redis' with a Redis URL, else 'local'
   * (`transportOf`). 'postgres' (BullMQ on PostgreSQL, in the `DATABASE_URL` database) needs a
   * `DATABASE_URL`.
   */
  transport: GenevaDriveTransport | null;
}

/**
 * Reads the configuration from environment variables. With none set, the app needs nothing but
 * Node.js: SQLite in `.data/sample-app.sqlite` (created on first start) and steps run in process.
 */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): SampleAppConfig {
  return {
    databaseUrl: env.DATABASE_URL || null,
    sqliteFile: env.SQLITE_FILE || '.data/sample-app.sqlite',
    schema: env.DATABASE_SCHEMA ?? 'sample_app',
    redisUrl: env.REDIS_URL || null,
    redisPrefix: env.REDIS_PREFIX ?? 'sample-app',
    transport: (env.GENEVA_TRANSPORT || null) as GenevaDriveTransport | null,
  };
}

/** The transport the configuration asks for, its requirements checked. */
export function transportOf(config: SampleAppConfig): GenevaDriveTransport {
  const transport = config.transport ?? (config.redisUrl ? 'redis' : 'local');
  if (transport !== 'redis' && transport !== 'postgres' && transport !== 'local') {
    throw new Error(
      `GENEVA_TRANSPORT must be redis, postgres or local, got '${String(transport)}'`,
    );
  }
  if (transport === 'redis' && !config.redisUrl) {
    throw new Error('GENEVA_TRANSPORT=redis needs REDIS_URL (redis://host:port)');
  }
  if (transport === 'postgres' && !config.databaseUrl) {
    throw new Error(
      "GENEVA_TRANSPORT=postgres needs DATABASE_URL: BullMQ's jobs go to that database",
    );
  }
  return transport;
}

/** One line saying where the app keeps its state and how steps travel (its first log line). */
export function describeSetup(config: SampleAppConfig): string {
  const database = config.databaseUrl
    ? `PostgreSQL (DATABASE_URL, schema ${config.schema})`
    : `SQLite in ${config.sqliteFile} (set DATABASE_URL for PostgreSQL)`;
  const transport = {
    redis: 'steps on BullMQ/Redis (REDIS_URL)',
    postgres: 'steps on BullMQ/PostgreSQL (GENEVA_TRANSPORT=postgres), no Redis',
    local: "steps in this process, transport 'local' (set REDIS_URL for BullMQ on Redis)",
  }[transportOf(config)];
  return `Sample app on ${database}, ${transport}`;
}

/**
 * Turns `redis://[user[:password]@]host[:port][/db]` (or `rediss://` for TLS) into the ioredis
 * connection options that `GenevaDriveModule` hands to BullMQ.
 */
export function parseRedisUrl(redisUrl: string): GenevaDriveConnectionOptions {
  const url = new URL(redisUrl);
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new Error(`REDIS_URL must start with redis:// or rediss://, got '${redisUrl}'`);
  }
  const connection: GenevaDriveConnectionOptions = {
    host: url.hostname || '127.0.0.1',
    port: url.port ? Number(url.port) : 6379,
  };
  if (url.username) connection.username = decodeURIComponent(url.username);
  if (url.password) connection.password = decodeURIComponent(url.password);
  const db = url.pathname.replace(/^\//, '');
  if (db) {
    if (!/^\d+$/.test(db)) throw new Error(`REDIS_URL database must be a number, got '${db}'`);
    connection.db = Number(db);
  }
  if (url.protocol === 'rediss:') connection.tls = {};
  return connection;
}
