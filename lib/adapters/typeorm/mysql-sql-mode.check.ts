import type { DataSource } from 'typeorm';
import { ModuleOptionsError } from '../../errors/module-options.error';

/** The sql_mode flag that makes the server read a backslash in a string literal as itself. */
const NO_BACKSLASH_ESCAPES = 'NO_BACKSLASH_ESCAPES';

/**
 * Boot check of a MariaDB/MySQL DataSource (SPEC §16.1): its session `sql_mode` must not contain
 * `NO_BACKSLASH_ESCAPES`. TypeORM's mysql2 path formats bound values into the statement on the
 * client, escaping quotes with backslashes (`'O\'Brien'`); under NO_BACKSLASH_ESCAPES the server
 * takes that backslash as an ordinary character, so the quote after it ends the string, and the
 * rest of a value is read as SQL. Rejects with `ModuleOptionsError` naming the setting, the reason
 * and the fix. It reads the mode of one pooled connection, which is the mode every connection of
 * the pool gets unless the app changes it per connection.
 */
export async function checkMysqlSqlMode(dataSource: DataSource): Promise<void> {
  const rows: unknown = await dataSource.query('SELECT @@SESSION.sql_mode AS sqlMode');
  const value = Array.isArray(rows)
    ? (rows[0] as { sqlMode?: unknown } | undefined)?.sqlMode
    : null;
  const mode = typeof value === 'string' ? value : '';
  const flags = mode.split(',').map((flag) => flag.trim());
  if (!flags.some((flag) => flag.toUpperCase() === NO_BACKSLASH_ESCAPES)) return;
  const without = flags.filter(
    (flag) => flag !== '' && flag.toUpperCase() !== NO_BACKSLASH_ESCAPES,
  );
  throw new ModuleOptionsError(
    `The MariaDB/MySQL data source runs with sql_mode '${mode}', which contains ${NO_BACKSLASH_ESCAPES}. ` +
      "TypeORM's mysql2 driver formats bound values into the SQL text on the client and escapes quotes " +
      `with a backslash (O\\'Brien); under ${NO_BACKSLASH_ESCAPES} the server reads that backslash as an ` +
      'ordinary character, so a quote inside a value ends the string and the rest of the value is read as SQL. ' +
      `Remove ${NO_BACKSLASH_ESCAPES} from the sql_mode of this data source's connections, e.g. ` +
      `sql_mode = '${without.join(',')}' in the server configuration (or SET GLOBAL sql_mode), and drop it ` +
      'from whatever sets sql_mode on the connections (the extra/connection options, init_connect, a pool hook).',
  );
}
