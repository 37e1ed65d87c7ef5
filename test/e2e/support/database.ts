import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { GENEVA_DRIVE_ENTITIES, GENEVA_DRIVE_MIGRATIONS } from '../../../lib';

/**
 * The database the e2e suite runs on: `GENEVA_TEST_DB=postgres|mariadb|sqlite` (default postgres).
 * Every harness gets an isolated namespace of its own on it: a PostgreSQL schema, a MariaDB
 * database, or a SQLite file (a file, not `:memory:`, so a restart test can reopen it).
 */
export type TestDatabase = 'postgres' | 'mariadb' | 'sqlite';

function readTestDatabase(): TestDatabase {
  const value = (process.env.GENEVA_TEST_DB ?? 'postgres').toLowerCase();
  if (value === 'postgres' || value === 'mariadb' || value === 'sqlite') return value;
  throw new Error(`GENEVA_TEST_DB must be postgres, mariadb or sqlite, not '${value}'.`);
}

export const testDatabase: TestDatabase = readTestDatabase();

/** For describe titles: "PostgreSQL", "MariaDB", "SQLite". */
export const testDatabaseLabel = { postgres: 'PostgreSQL', mariadb: 'MariaDB', sqlite: 'SQLite' }[
  testDatabase
];

/**
 * The connection pooler between the suite and PostgreSQL, if any: `GENEVA_TEST_POOLER=pgbouncer`
 * when PG* point at PgBouncer in transaction mode (test/pgbouncer, .ci/run's test-pgbouncer stage:
 * `PGPORT=6433`). Every connection the suite opens through `postgresConnection` then goes through
 * it. Specs that cannot work through a transaction pooler by their nature skip themselves on it
 * (`describeIf(testPooler === null)`, saying why).
 */
export type TestPooler = 'pgbouncer';

function readTestPooler(): TestPooler | null {
  const value = (process.env.GENEVA_TEST_POOLER ?? '').toLowerCase();
  if (value === '') return null;
  if (value !== 'pgbouncer') {
    throw new Error(`GENEVA_TEST_POOLER must be pgbouncer or unset, not '${value}'.`);
  }
  if (testDatabase !== 'postgres') {
    throw new Error(
      `GENEVA_TEST_POOLER=pgbouncer needs GENEVA_TEST_DB=postgres, not '${testDatabase}'.`,
    );
  }
  return value;
}

export const testPooler: TestPooler | null = readTestPooler();

/** PostgreSQL of the test machine; PG* variables override (PGPORT=6433: through PgBouncer). */
export const postgresConnection = {
  type: 'postgres' as const,
  host: process.env.PGHOST ?? '127.0.0.1',
  port: Number(process.env.PGPORT ?? 5432),
  username: process.env.PGUSER ?? 'postgres',
  password: process.env.PGPASSWORD,
  database: process.env.PGDATABASE ?? 'test',
};

/** MariaDB of the test machine (root, empty password); MYSQL_* variables override. */
export const mariadbConnection = {
  type: 'mariadb' as const,
  host: process.env.MYSQL_HOST ?? '127.0.0.1',
  port: Number(process.env.MYSQL_PORT ?? 3306),
  username: process.env.MYSQL_USER ?? 'root',
  password: process.env.MYSQL_PASSWORD ?? '',
  // What the README asks of every MariaDB/MySQL DataSource (SPEC §15.5).
  timezone: 'Z',
};

/** The database an admin connection to MariaDB opens (it must exist). */
const MARIADB_ADMIN_DATABASE = process.env.MYSQL_DATABASE ?? 'test';

const SQLITE_DIR = join(tmpdir(), 'geneva-drive-e2e');

/** Runs statements on an admin connection of the test database. */
async function admin(statements: string[]): Promise<void> {
  const options: DataSourceOptions =
    testDatabase === 'mariadb'
      ? { ...mariadbConnection, database: MARIADB_ADMIN_DATABASE }
      : postgresConnection;
  const source = await new DataSource(options).initialize();
  try {
    for (const statement of statements) await source.query(statement);
  } finally {
    await source.destroy();
  }
}

/**
 * A fresh isolated namespace per harness or test file; drop it in afterAll. Resolves its handle:
 * the schema name (PostgreSQL), the database name (MariaDB) or the file path (SQLite).
 */
export async function createSchema(prefix = 'gd_test'): Promise<string> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  switch (testDatabase) {
    case 'postgres':
      await admin([`CREATE SCHEMA "${name}"`]);
      return name;
    case 'mariadb':
      await admin([`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`]);
      return name;
    case 'sqlite':
      mkdirSync(SQLITE_DIR, { recursive: true });
      return join(SQLITE_DIR, `${name}.sqlite`);
  }
}

export async function dropSchema(schema: string): Promise<void> {
  switch (testDatabase) {
    case 'postgres':
      return admin([`DROP SCHEMA IF EXISTS "${schema}" CASCADE`]);
    case 'mariadb':
      return admin([`DROP DATABASE IF EXISTS \`${schema}\``]);
    case 'sqlite':
      for (const suffix of ['', '-journal', '-wal', '-shm'])
        rmSync(`${schema}${suffix}`, { force: true });
  }
}

/** Connection options for the namespace, without entities or migrations. */
export function connectionOptions(schema: string): DataSourceOptions {
  switch (testDatabase) {
    case 'postgres':
      return { ...postgresConnection, schema, extra: { max: 30 } };
    case 'mariadb':
      return { ...mariadbConnection, database: schema, extra: { connectionLimit: 30 } };
    case 'sqlite':
      return { type: 'better-sqlite3', database: schema };
  }
}

/** A test entity class (`DataSourceOptions.entities` takes classes). */
export type EntitySchemaTarget = new () => object;

/** DataSource options for the engine's tables (migrations run on init) plus extra entities. */
export function dataSourceOptions(
  schema: string,
  entities: EntitySchemaTarget[] = [],
  migrations: DataSourceOptions['migrations'] = GENEVA_DRIVE_MIGRATIONS,
): DataSourceOptions {
  return {
    ...connectionOptions(schema),
    entities: [...GENEVA_DRIVE_ENTITIES, ...entities],
    migrations,
    migrationsRun: true,
    synchronize: true,
  };
}
