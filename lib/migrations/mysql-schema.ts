import type { QueryRunner, Table, TableColumn, TableIndex } from 'typeorm';
import { GenevaDriveError } from '../errors/geneva-drive.error';
import { quoteIdentifier, quoteTable } from '../adapters/sql-identifiers';

// MariaDB/MySQL DDL in plain SQL. TypeORM's own helpers (getTable, createIndex, addColumns,
// dropTable...) reload the table through `typeorm_metadata` as soon as it has a generated column,
// and fail when that table does not exist, which it does not unless TypeORM made it for an
// entity. So on this family the guards check information_schema and issue the statements
// themselves. Every table is addressed as `database`.`table`, the database being the DataSource's
// (or the connection's current one); every name is quoted by quoteIdentifier/quoteTable (SPEC
// §16.1). DDL commits implicitly here, so each statement is guarded and the migrations can be
// re-run after a partial failure.

/** The DataSource's database, or null to use the connection's current one. */
function databaseOf(queryRunner: QueryRunner): string | null {
  return (queryRunner.connection.driver as { database?: string }).database ?? null;
}

/** The quoted table path for raw statements: `database`.`table`, or `table` alone. */
function quotedTablePath(queryRunner: QueryRunner, tableName: string): string {
  return quoteTable({ database: databaseOf(queryRunner) ?? undefined, tableName }, 'mysql');
}

async function exists(queryRunner: QueryRunner, sql: string, params: unknown[]): Promise<boolean> {
  const rows = (await queryRunner.query(sql, [databaseOf(queryRunner), ...params])) as unknown[];
  return rows.length > 0;
}

export function mysqlHasTable(queryRunner: QueryRunner, tableName: string): Promise<boolean> {
  return exists(
    queryRunner,
    'SELECT 1 FROM information_schema.TABLES WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? LIMIT 1',
    [tableName],
  );
}

export function mysqlHasColumn(
  queryRunner: QueryRunner,
  tableName: string,
  column: string,
): Promise<boolean> {
  return exists(
    queryRunner,
    'SELECT 1 FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND COLUMN_NAME = ? LIMIT 1',
    [tableName, column],
  );
}

export function mysqlHasIndex(
  queryRunner: QueryRunner,
  tableName: string,
  index: string,
): Promise<boolean> {
  return exists(
    queryRunner,
    'SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND INDEX_NAME = ? LIMIT 1',
    [tableName, index],
  );
}

/**
 * `name type[(length|precision)] [CHARACTER SET utf8mb4 COLLATE c] NULL|NOT NULL [DEFAULT ...]` for
 * one column (the collation given, else the column's own, else the table's default). The type and the default are SQL text written in the migrations (column-types.ts,
 * `"'ready'"`), never values; the collation is a name, quoted.
 */
function columnSql(column: TableColumn, collation = column.collation): string {
  let typeSql = column.type;
  if (column.length) typeSql += `(${column.length})`;
  else if (column.precision !== undefined && column.precision !== null)
    typeSql += `(${column.precision})`;
  const collationSql = collation ? ` ${characterSetSql(collation)}` : '';
  const defaultSql =
    column.default !== undefined && column.default !== null
      ? ` DEFAULT ${String(column.default)}`
      : '';
  return `${quoteIdentifier(column.name, 'mysql')} ${typeSql}${collationSql} ${column.isNullable ? 'NULL' : 'NOT NULL'}${defaultSql}`;
}

/** `CHARACTER SET utf8mb4 COLLATE `collation``: every text column of the library is utf8mb4. */
function characterSetSql(collation: string): string {
  return `CHARACTER SET utf8mb4 COLLATE ${quoteIdentifier(collation, 'mysql')}`;
}

/**
 * The PAD SPACE binary collation the tables had before GenevaDriveNoPadCollation1764400003000:
 * exact and case-sensitive, but blind to trailing spaces (`'a' = 'a '`, also in unique indexes).
 */
export const PAD_SPACE_BINARY_COLLATION = 'utf8mb4_bin';

/**
 * The NO PAD binary collations of utf8mb4, in order of preference: MariaDB's (10.2+) and MySQL's
 * (8.0+). Both compare code points exactly, trailing spaces included, as PostgreSQL and SQLite do.
 */
export const NO_PAD_BINARY_COLLATIONS = ['utf8mb4_nopad_bin', 'utf8mb4_0900_bin'] as const;

/**
 * The NO PAD binary collation this server has (information_schema.COLLATIONS), refusing a server
 * that has none: with a PAD SPACE collation `'evt-1'` and `'evt-1 '` would be one idempotency key.
 */
export async function mysqlNoPadBinaryCollation(queryRunner: QueryRunner): Promise<string> {
  const rows = (await queryRunner.query(
    'SELECT COLLATION_NAME AS name FROM information_schema.COLLATIONS WHERE COLLATION_NAME IN (?, ?)',
    [...NO_PAD_BINARY_COLLATIONS],
  )) as Array<{ name: string }>;
  const available = new Set(rows.map((row) => row.name));
  const collation = NO_PAD_BINARY_COLLATIONS.find((name) => available.has(name));
  if (collation) return collation;
  const [{ version }] = (await queryRunner.query('SELECT VERSION() AS version')) as Array<{
    version: string;
  }>;
  throw new GenevaDriveError(
    `GENEVA_DRIVE_MIGRATIONS need a NO PAD binary collation of utf8mb4 (utf8mb4_nopad_bin, MariaDB ` +
      `10.2+, or utf8mb4_0900_bin, MySQL 8.0+), and the server (${version}) has neither: with a ` +
      `PAD SPACE collation 'a' and 'a ' are one hero id or idempotency key. Upgrade the server.`,
  );
}

/**
 * Creates the table when missing, InnoDB with utf8mb4 and the server's NO PAD binary collation as
 * its default, so that every text column compares exactly (case, trailing spaces), as on
 * PostgreSQL. Foreign keys are never created on this family (SPEC §15.8).
 */
export async function mysqlEnsureTable(queryRunner: QueryRunner, definition: Table): Promise<void> {
  if (await mysqlHasTable(queryRunner, definition.name)) return;
  const collation = await mysqlNoPadBinaryCollation(queryRunner);
  const primaryKeyColumns = definition.columns
    .filter((column) => column.isPrimary)
    .map((column) => quoteIdentifier(column.name, 'mysql'));
  const definitionClauses = definition.columns.map((column) => columnSql(column));
  if (primaryKeyColumns.length > 0)
    definitionClauses.push(`PRIMARY KEY (${primaryKeyColumns.join(', ')})`);
  await queryRunner.query(
    `CREATE TABLE IF NOT EXISTS ${quotedTablePath(queryRunner, definition.name)} (${definitionClauses.join(', ')}) ` +
      `ENGINE=InnoDB DEFAULT ${characterSetSql(collation)}`,
  );
}

/**
 * Gives the table's default and each of `columns` (restated as the migrations created them) the
 * collation `collation`, in one ALTER TABLE. Guarded: a missing table or column is left alone, and
 * nothing runs when the table and every present column have it already, so a re-run after a
 * partial failure (DDL commits per statement here) completes the tables still missing it. The
 * indexes and stored generated columns built on these columns are rebuilt by the same statement.
 */
export async function mysqlEnsureCollation(
  queryRunner: QueryRunner,
  tableName: string,
  columns: TableColumn[],
  collation: string,
): Promise<void> {
  const database = databaseOf(queryRunner);
  const [table] = (await queryRunner.query(
    'SELECT TABLE_COLLATION AS collation FROM information_schema.TABLES WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?',
    [database, tableName],
  )) as Array<{ collation: string | null }>;
  if (!table) return;
  const present = (await queryRunner.query(
    'SELECT COLUMN_NAME AS name, COLLATION_NAME AS collation FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?',
    [database, tableName],
  )) as Array<{ name: string; collation: string | null }>;
  const collationOf = new Map(present.map((column) => [column.name, column.collation]));
  const stale = columns.filter(
    (column) => collationOf.has(column.name) && collationOf.get(column.name) !== collation,
  );
  if (stale.length === 0 && table.collation === collation) return;
  const alterClauses = [
    `DEFAULT ${characterSetSql(collation)}`,
    ...stale.map((column) => `MODIFY COLUMN ${columnSql(column, collation)}`),
  ];
  await queryRunner.query(
    `ALTER TABLE ${quotedTablePath(queryRunner, tableName)} ${alterClauses.join(', ')}`,
  );
}

/** Adds the missing columns in one statement. */
export async function mysqlEnsureColumns(
  queryRunner: QueryRunner,
  tableName: string,
  columns: TableColumn[],
): Promise<void> {
  const missing: TableColumn[] = [];
  for (const column of columns) {
    if (!(await mysqlHasColumn(queryRunner, tableName, column.name))) missing.push(column);
  }
  if (missing.length === 0) return;
  const addClauses = missing.map((column) => `ADD COLUMN ${columnSql(column)}`);
  await queryRunner.query(
    `ALTER TABLE ${quotedTablePath(queryRunner, tableName)} ${addClauses.join(', ')}`,
  );
}

/** Creates each missing index (no partial indexes on this family: see mysqlEnsureGeneratedUniqueKey). */
export async function mysqlEnsureIndices(
  queryRunner: QueryRunner,
  tableName: string,
  indices: TableIndex[],
): Promise<void> {
  for (const index of indices) {
    if (index.where) throw new Error(`MariaDB/MySQL has no partial indexes (${index.name}).`);
    if (await mysqlHasIndex(queryRunner, tableName, index.name!)) continue;
    const indexColumnsClause = index.columnNames
      .map((column) => quoteIdentifier(column, 'mysql'))
      .join(', ');
    await queryRunner.query(
      `CREATE ${index.isUnique ? 'UNIQUE ' : ''}INDEX ${quoteIdentifier(index.name!, 'mysql')} ON ${quotedTablePath(queryRunner, tableName)} (${indexColumnsClause})`,
    );
  }
}

/**
 * A uniqueness rule that holds only while a row is "active", where partial indexes do not exist
 * (SPEC §15.8): a stored generated BINARY(16) column that holds a hash of the key while the row is
 * active and NULL otherwise (NULLs never collide), with a unique index on it. `expressionSql` is
 * the generated column's expression, SQL written by the migration with its names quoted.
 */
export async function mysqlEnsureGeneratedUniqueKey(
  queryRunner: QueryRunner,
  tableName: string,
  key: { column: string; expressionSql: string; index: string },
): Promise<void> {
  const quotedTable = quotedTablePath(queryRunner, tableName);
  const quotedColumn = quoteIdentifier(key.column, 'mysql');
  const quotedIndex = quoteIdentifier(key.index, 'mysql');
  if (!(await mysqlHasColumn(queryRunner, tableName, key.column))) {
    await queryRunner.query(
      `ALTER TABLE ${quotedTable} ADD COLUMN ${quotedColumn} BINARY(16) GENERATED ALWAYS AS (${key.expressionSql}) STORED, ` +
        `ADD UNIQUE INDEX ${quotedIndex} (${quotedColumn})`,
    );
  } else if (!(await mysqlHasIndex(queryRunner, tableName, key.index))) {
    await queryRunner.query(
      `CREATE UNIQUE INDEX ${quotedIndex} ON ${quotedTable} (${quotedColumn})`,
    );
  }
}

export async function mysqlDropIndicesIfExist(
  queryRunner: QueryRunner,
  tableName: string,
  names: string[],
): Promise<void> {
  for (const name of names) {
    if (await mysqlHasIndex(queryRunner, tableName, name)) {
      await queryRunner.query(
        `DROP INDEX ${quoteIdentifier(name, 'mysql')} ON ${quotedTablePath(queryRunner, tableName)}`,
      );
    }
  }
}

export async function mysqlDropColumnsIfExist(
  queryRunner: QueryRunner,
  tableName: string,
  names: string[],
): Promise<void> {
  if (!(await mysqlHasTable(queryRunner, tableName))) return;
  const present: string[] = [];
  for (const name of names) {
    if (await mysqlHasColumn(queryRunner, tableName, name)) present.push(name);
  }
  if (present.length === 0) return;
  const dropClauses = present.map((name) => `DROP COLUMN ${quoteIdentifier(name, 'mysql')}`);
  await queryRunner.query(
    `ALTER TABLE ${quotedTablePath(queryRunner, tableName)} ${dropClauses.join(', ')}`,
  );
}

export async function mysqlDropTableIfExists(
  queryRunner: QueryRunner,
  tableName: string,
): Promise<void> {
  await queryRunner.query(`DROP TABLE IF EXISTS ${quotedTablePath(queryRunner, tableName)}`);
}

/** The name of the JSON_VALID check of a JSON column (the `<table>_<column>_is_json` pattern). */
export function jsonCheckName(tableName: string, column: string): string {
  return `${tableName}_${column}_is_json`;
}

/** The CHECK constraints of a table, by name (MariaDB names a column's own check after it). */
async function mariadbCheckNames(
  queryRunner: QueryRunner,
  tableName: string,
): Promise<Set<string>> {
  const rows = (await queryRunner.query(
    'SELECT CONSTRAINT_NAME AS name FROM information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?',
    [databaseOf(queryRunner), tableName],
  )) as Array<{ name: string }>;
  return new Set(rows.map((row) => row.name));
}

async function presentColumns(queryRunner: QueryRunner, tableName: string): Promise<Set<string>> {
  const rows = (await queryRunner.query(
    'SELECT COLUMN_NAME AS name FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?',
    [databaseOf(queryRunner), tableName],
  )) as Array<{ name: string }>;
  return new Set(rows.map((row) => row.name));
}

/**
 * MariaDB: makes each JSON column of `columns` (restated as column-types.ts defines it: LONGTEXT,
 * utf8mb4_bin) plain text with a named table-level `JSON_VALID` check. MariaDB's `json` type is the
 * same LONGTEXT with a column-level check, and for such a column the server marks the result
 * metadata as JSON, so mysql2 decodes the values itself before TypeORM's `json` column type decodes
 * them again (a payload `"123"` would read back as the number 123). A table-level check keeps the
 * values valid JSON without that mark. In one ALTER TABLE; guarded (missing columns are left
 * alone, nothing runs when every present column is done), so a re-run completes a partial one.
 */
export async function mariadbEnsureJsonText(
  queryRunner: QueryRunner,
  tableName: string,
  columns: TableColumn[],
): Promise<void> {
  const present = await presentColumns(queryRunner, tableName);
  const checks = await mariadbCheckNames(queryRunner, tableName);
  const clauses: string[] = [];
  for (const column of columns.filter((c) => present.has(c.name))) {
    if (checks.has(column.name)) clauses.push(`MODIFY COLUMN ${columnSql(column)}`);
    const check = jsonCheckName(tableName, column.name);
    if (!checks.has(check))
      clauses.push(
        `ADD CONSTRAINT ${quoteIdentifier(check, 'mysql')} CHECK (JSON_VALID(${quoteIdentifier(column.name, 'mysql')}))`,
      );
  }
  if (clauses.length === 0) return;
  await queryRunner.query(
    `ALTER TABLE ${quotedTablePath(queryRunner, tableName)} ${clauses.join(', ')}`,
  );
}

/** MariaDB: undoes mariadbEnsureJsonText, back to the `json` type (nullable, as all of them are). */
export async function mariadbRestoreJsonType(
  queryRunner: QueryRunner,
  tableName: string,
  columnNames: string[],
): Promise<void> {
  const present = await presentColumns(queryRunner, tableName);
  const checks = await mariadbCheckNames(queryRunner, tableName);
  const clauses: string[] = [];
  for (const name of columnNames.filter((c) => present.has(c))) {
    const check = jsonCheckName(tableName, name);
    if (checks.has(check)) clauses.push(`DROP CONSTRAINT ${quoteIdentifier(check, 'mysql')}`);
    if (!checks.has(name))
      clauses.push(`MODIFY COLUMN ${quoteIdentifier(name, 'mysql')} JSON NULL`);
  }
  if (clauses.length === 0) return;
  await queryRunner.query(
    `ALTER TABLE ${quotedTablePath(queryRunner, tableName)} ${clauses.join(', ')}`,
  );
}
