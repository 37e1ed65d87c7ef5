import type { GenevaDriveConnectionOptions } from 'nestjs-geneva-drive';

/** Injection token of the resolved {@link SampleAppConfig}. */
export const SAMPLE_APP_CONFIG = Symbol('SAMPLE_APP_CONFIG');

/** Everything the sample app reads from its environment, resolved once at module construction. */
export interface SampleAppConfig {
  /** PostgreSQL connection string (env `DATABASE_URL`). */
  databaseUrl: string;
  /** PostgreSQL schema holding the app's and the library's tables (env `DATABASE_SCHEMA`). */
  schema: string;
  /** Redis connection string for BullMQ (env `REDIS_URL`). */
  redisUrl: string;
  /** BullMQ key prefix (env `REDIS_PREFIX`). */
  redisPrefix: string;
}

/** Reads the configuration from environment variables, with defaults for a local setup. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): SampleAppConfig {
  return {
    databaseUrl: env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    schema: env.DATABASE_SCHEMA ?? 'sample_app',
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    redisPrefix: env.REDIS_PREFIX ?? 'sample-app',
  };
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
