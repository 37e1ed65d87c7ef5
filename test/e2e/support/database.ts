import { randomBytes } from 'node:crypto';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { GENEVA_DRIVE_ENTITIES, GENEVA_DRIVE_MIGRATIONS } from '../../../lib';

/** PostgreSQL of the test machine; PG* variables override. */
export const postgresConnection = {
  type: 'postgres' as const,
  host: process.env.PGHOST ?? '127.0.0.1',
  port: Number(process.env.PGPORT ?? 5432),
  username: process.env.PGUSER ?? 'postgres',
  password: process.env.PGPASSWORD,
  database: process.env.PGDATABASE ?? 'test',
};

/** A fresh schema per test file keeps files isolated; drop it in afterAll. */
export async function createSchema(prefix = 'gd_test'): Promise<string> {
  const schema = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new DataSource(postgresConnection);
  await admin.initialize();
  await admin.query(`CREATE SCHEMA "${schema}"`);
  await admin.destroy();
  return schema;
}

export async function dropSchema(schema: string): Promise<void> {
  const admin = new DataSource(postgresConnection);
  await admin.initialize();
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin.destroy();
}

/** DataSource options for the engine's tables (migrations run on init) plus extra entities. */
export function dataSourceOptions(
  schema: string,
  entities: Function[] = [],
  migrations: DataSourceOptions['migrations'] = GENEVA_DRIVE_MIGRATIONS,
): DataSourceOptions {
  return {
    ...postgresConnection,
    schema,
    entities: [...GENEVA_DRIVE_ENTITIES, ...entities],
    migrations,
    migrationsRun: true,
    synchronize: true,
    extra: { max: 30 },
  };
}
