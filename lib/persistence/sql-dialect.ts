import type { DataSource } from 'typeorm';

/** The database families the library distinguishes. */
export type DatabaseFamily = 'postgres' | 'mysql' | 'sqlite';

/** Which family a DataSource belongs to; refuses drivers the library does not support. */
export function databaseFamily(dataSource: DataSource): DatabaseFamily {
  const type = dataSource.options.type;
  if (type === 'postgres' || type === 'cockroachdb') return 'postgres';
  if (type === 'mysql' || type === 'mariadb') return 'mysql';
  if (type === 'better-sqlite3' || type === 'sqlite' || type === 'capacitor' || type === 'expo') {
    return 'sqlite';
  }
  throw new Error(
    `nestjs-geneva-drive supports PostgreSQL, MySQL/MariaDB and SQLite, but the data source uses '${type}'.`,
  );
}

/** True when the error is a unique-constraint violation. */
export function isUniqueViolation(error: unknown): boolean {
  const driverError = (error as { driverError?: { code?: string; errno?: number } } | null)?.driverError;
  const code = driverError?.code ?? (error as { code?: string } | null)?.code;
  return (
    code === '23505' || // PostgreSQL
    code === 'ER_DUP_ENTRY' || // MySQL/MariaDB
    code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}
