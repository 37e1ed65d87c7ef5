import type { DataSource } from 'typeorm';
import { MissingMigrationError } from '../../errors/missing-migration.error';
import { JSON_COLUMNS } from '../../migrations/migration.constants';

/**
 * Boot check of a MariaDB DataSource: none of the library's JSON columns may still have MariaDB's
 * `json` type (a column-level JSON_VALID check, which MariaDB names after the column). For such a
 * column the server marks results as JSON and mysql2 decodes them before TypeORM's `json` column
 * type decodes them again, so a payload, cursor or metadata value that is a string reading as JSON
 * (`"123"`, `"true"`) would come back as a number or boolean. GenevaDriveMariaDbJsonText
 * makes them plain text; until it has run, boot fails with `MissingMigrationError`. A no-op on
 * MySQL, whose JSON columns were always LONGTEXT.
 */
export async function checkMariaDbJsonColumns(dataSource: DataSource): Promise<void> {
  const [server] = await dataSource.query<Array<{ version: string }>>(
    'SELECT VERSION() AS version',
  );
  if (!/mariadb/i.test(server?.version ?? '')) return;
  const tables = Object.keys(JSON_COLUMNS);
  const pairs = tables.flatMap((table) => JSON_COLUMNS[table].map((column) => [table, column]));
  const database = (dataSource.options as { database?: string }).database ?? null;
  const rows = await dataSource.query<Array<{ tableName: string; columnName: string }>>(
    'SELECT TABLE_NAME AS tableName, CONSTRAINT_NAME AS columnName FROM information_schema.CHECK_CONSTRAINTS ' +
      `WHERE CONSTRAINT_SCHEMA = COALESCE(?, DATABASE()) AND (${pairs.map(() => '(TABLE_NAME = ? AND CONSTRAINT_NAME = ?)').join(' OR ')})`,
    [database, ...pairs.flat()],
  );
  if (rows.length === 0) return;
  const columns = rows.map((row) => `${row.tableName}.${row.columnName}`).sort();
  throw new MissingMigrationError(
    `The library's JSON columns ${columns.join(', ')} still have MariaDB's json type: mysql2 would decode ` +
      'their values before TypeORM does, and a string such as "123" would read back as the number 123. ' +
      'Run the migration GenevaDriveMariaDbJsonText1764400004000 of GENEVA_DRIVE_MIGRATIONS before the app ' +
      'starts (migrationsRun: true, or `typeorm migration:run` at deploy time).',
  );
}
