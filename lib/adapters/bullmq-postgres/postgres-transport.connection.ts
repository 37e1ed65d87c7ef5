import type { PostgresPoolConfig } from 'bullmq';
import type { DataSourceOptions } from 'typeorm';
import { ModuleOptionsError } from '../../errors/module-options.error';

/**
 * The connection BullMQ's PostgreSQL backend opens (its own `pg` pool and one LISTEN client):
 * `connection` when it names a database, else the TypeORM data source's database. BullMQ's
 * tables live in `connection.schema`, else in the schema the module's `prefix` names
 * (`bullmqSchemaFor`), which BullMQ creates and migrates when it first connects.
 */
export function postgresTransportConnection(
  connection: Record<string, unknown>,
  dataSource: DataSourceOptions,
  prefix: string,
): PostgresPoolConfig {
  const given = Object.keys(connection).length > 0;
  const base = given ? { ...connection } : fromDataSource(dataSource);
  return {
    migrate: true,
    ...base,
    schema: (base.schema as string | undefined) ?? bullmqSchemaFor(prefix),
  };
}

/**
 * BullMQ's schema for a prefix: `<prefix>_bullmq` as a plain identifier (BullMQ takes letters,
 * digits and underscores only, at most 63 characters), so the default prefix gives
 * `geneva_drive_bullmq` and two prefixes give two schemas, as they give two key spaces on Redis.
 */
export function bullmqSchemaFor(prefix: string): string {
  const identifier = `${prefix.replace(/[^A-Za-z0-9_]/g, '_')}_bullmq`.toLowerCase();
  return /^[0-9]/.test(identifier) ? `_${identifier}`.slice(0, 63) : identifier.slice(0, 63);
}

function fromDataSource(options: DataSourceOptions): Record<string, unknown> {
  if (options.type !== 'postgres') {
    throw new ModuleOptionsError(
      `transport 'postgres' puts BullMQ's job tables in the TypeORM data source's database by default, ` +
        `but that data source is ${options.type}. Give connection: { connectionString: 'postgres://…' } ` +
        "(any node-postgres pool config) for a PostgreSQL database, or use transport 'redis'.",
    );
  }
  const { url, host, port, username, password, database, ssl } = options;
  const config: Record<string, unknown> = url
    ? { connectionString: url }
    : { host, port, user: username, password, database };
  if (ssl !== undefined) config.ssl = ssl;
  return Object.fromEntries(Object.entries(config).filter(([, value]) => value !== undefined));
}
