import type { DataSource, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { UnitOfWork } from './unit-of-work';

/**
 * The database families the library distinguishes, and what differs between them:
 *
 * | | postgres | mysql (MariaDB, MySQL) | sqlite |
 * |---|---|---|---|
 * | row locks | `FOR UPDATE` | `FOR UPDATE`, also on every read that decides a transition | none: the in-process mutex serializes library transactions |
 * | uniqueness of ongoing/active rows | partial unique indexes | stored generated key columns + unique index | partial unique indexes |
 * | duplicate signal insert | `ON CONFLICT DO NOTHING` | savepoint, rolled back on ER_DUP_ENTRY (never `INSERT IGNORE`) | `ON CONFLICT DO NOTHING` |
 * | foreign keys | cascade | none: children are deleted explicitly | cascade |
 * | `LIMIT` in an `IN (subquery)` | yes | no: select the ids first, then delete by id list | yes |
 * | housekeeping lock | `pg_try_advisory_xact_lock` in a held transaction | `GET_LOCK` | in process |
 */
export type DatabaseFamily = 'postgres' | 'mysql' | 'sqlite';

/** Which family a DataSource belongs to; refuses drivers the library does not support. */
export function databaseFamily(dataSource: DataSource): DatabaseFamily {
  // A string: TypeORM 1.x's DatabaseType no longer lists 'sqlite', which 0.3 still accepts.
  const type: string = dataSource.options.type;
  if (type === 'postgres' || type === 'cockroachdb') return 'postgres';
  if (type === 'mysql' || type === 'mariadb') return 'mysql';
  if (type === 'better-sqlite3' || type === 'sqlite' || type === 'capacitor' || type === 'expo') {
    return 'sqlite';
  }
  throw new Error(
    `nestjs-geneva-drive supports PostgreSQL, MySQL/MariaDB and SQLite, but the data source uses '${type}'.`,
  );
}

/**
 * Whether the family accepts `LIMIT` inside an `IN (...)` subquery (MariaDB/MySQL do not, and
 * MySQL also refuses a DELETE whose subquery reads the same table): batch deletes select the ids
 * first and then delete by that list on every family.
 */
export function supportsLimitInSubquery(family: DatabaseFamily): boolean {
  return family !== 'mysql';
}

/**
 * Makes `query` a locking read where the unit of work asks for it (MariaDB/MySQL), for reads that
 * decide a transition under the workflow lock. Returns the same builder.
 */
export function lockingRead<T extends ObjectLiteral>(
  uow: UnitOfWork,
  query: SelectQueryBuilder<T>,
): SelectQueryBuilder<T> {
  return uow.lockingReads ? query.setLock('pessimistic_write') : query;
}

/** MariaDB/MySQL: whether the DataSource has mysql2 read and write DATETIMEs in UTC. */
export function hasUtcTimezone(dataSource: DataSource): boolean {
  const timezone = (dataSource.options as { timezone?: string }).timezone;
  return timezone !== undefined && /^(z|[+-]00:?00)$/i.test(timezone);
}

/** True when the error is a unique-constraint violation. */
export function isUniqueViolation(error: unknown): boolean {
  const driverError = (error as { driverError?: { code?: string; errno?: number } } | null)
    ?.driverError;
  const code = driverError?.code ?? (error as { code?: string } | null)?.code;
  const errno = driverError?.errno ?? (error as { errno?: number } | null)?.errno;
  return (
    code === '23505' || // PostgreSQL
    code === 'ER_DUP_ENTRY' || // MySQL/MariaDB
    errno === 1062 || // MySQL/MariaDB, whatever the client names it
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}
