import { DBOS } from '@dbos-inc/dbos-sdk';
import { DataSource } from 'typeorm';
import { postgresConnection } from '../../test/e2e/support/database';
import { BENCH_APPLICATION_NAME, ownBackends } from './cpu-meter';

/**
 * The PostgreSQL database DBOS Transact keeps its system tables in during the benchmarks: its own,
 * so it never touches the `test` database the e2e suite and the other benchmarks share. Each
 * benchmark process works in a fresh schema of it (`dbos_bench_<pid>`), dropped at the end.
 */
export const DBOS_DATABASE = 'geneva_bench_dbos';

/**
 * The `application_name` DBOS gives its pool's connections: `dbos_transact_<executor id>_<app
 * version>`. Both parts are set in `launchDbos`, so the CPU meter can find DBOS's backends the way
 * it finds the engine's.
 */
const DBOS_EXECUTOR_ID = BENCH_APPLICATION_NAME;
const DBOS_APP_VERSION = 'bench';
export const DBOS_APPLICATION_NAME = `dbos_transact_${DBOS_EXECUTOR_ID}_${DBOS_APP_VERSION}`;

/**
 * What `CREATE DATABASE` fails with when another benchmark created it meanwhile: "already exists",
 * or a unique violation on the catalog when both ran at the same moment.
 */
const DATABASE_CREATED_MEANWHILE = new Set(['42P04', '23505']);

export interface DbosBench {
  /** A connection to DBOS's database, for the CPU meter (it reads `pg_stat_activity`). */
  dataSource: DataSource;
  /** Shuts DBOS down (its pool, its listener, its background loops) and drops the schema. */
  close(): Promise<void>;
}

export interface DbosBenchOptions {
  /**
   * Connections in DBOS's system database pool: the benches give it what `bootEngine` gives the
   * engine's pool (`benchPoolSize`).
   */
  poolSize: number;
}

/**
 * Launches DBOS Transact in this process on a fresh schema of `DBOS_DATABASE` (created if missing),
 * logging warnings and errors only (to stderr: its info lines would go to stdout, where the
 * results are). Register the workflows and steps before calling this: DBOS takes none after launch.
 */
export async function launchDbos(options: DbosBenchOptions): Promise<DbosBench> {
  await ensureDatabase();
  const schema = `dbos_bench_${process.pid}`;
  const dataSource = await new DataSource({
    ...postgresConnection,
    database: DBOS_DATABASE,
  }).initialize();
  try {
    DBOS.setConfig({
      name: 'geneva-drive-bench',
      systemDatabaseUrl: systemDatabaseUrl(),
      systemDatabaseSchemaName: schema,
      systemDatabasePoolSize: options.poolSize,
      executorID: DBOS_EXECUTOR_ID,
      applicationVersion: DBOS_APP_VERSION,
      logLevel: 'warn',
    });
    await DBOS.launch();
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  // The CPU meter finds DBOS's backends by name: fail now rather than report 0 ms if DBOS changed it.
  if ((await ownBackends(dataSource, DBOS_APPLICATION_NAME)).length === 0) {
    await DBOS.shutdown();
    await dataSource.destroy();
    throw new Error(`No connection of DBOS's pool is named '${DBOS_APPLICATION_NAME}'.`);
  }
  return {
    dataSource,
    async close() {
      try {
        await DBOS.shutdown();
        await dataSource.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await dataSource.destroy();
      }
    },
  };
}

/** Creates `DBOS_DATABASE` unless it exists, from the server's `postgres` maintenance database. */
async function ensureDatabase(): Promise<void> {
  const admin = await new DataSource({ ...postgresConnection, database: 'postgres' }).initialize();
  try {
    const existing = await admin.query<unknown[]>('SELECT 1 FROM pg_database WHERE datname = $1', [
      DBOS_DATABASE,
    ]);
    if (existing.length > 0) return;
    try {
      await admin.query(`CREATE DATABASE "${DBOS_DATABASE}"`);
    } catch (error) {
      if (!DATABASE_CREATED_MEANWHILE.has(String((error as { code?: unknown }).code))) throw error;
    }
  } finally {
    await admin.destroy();
  }
}

/** The connection string DBOS takes, for the same server, user and password as the e2e suite. */
function systemDatabaseUrl(): string {
  const url = new URL(`postgresql://${postgresConnection.host}:${postgresConnection.port}`);
  url.username = postgresConnection.username;
  if (postgresConnection.password !== undefined) url.password = postgresConnection.password;
  url.pathname = `/${DBOS_DATABASE}`;
  return url.toString();
}
