import type { QueryRunner, Table, TableColumn, TableIndex } from 'typeorm';

// MariaDB/MySQL DDL in plain SQL. TypeORM's own helpers (getTable, createIndex, addColumns,
// dropTable...) reload the table through `typeorm_metadata` as soon as it has a generated column,
// and fail when that table does not exist, which it does not unless TypeORM made it for an
// entity. So on this family the guards check information_schema and issue the statements
// themselves. Every table is addressed as `database`.`table`, the database being the DataSource's
// (or the connection's current one), escaped by the driver. DDL commits implicitly here, so each
// statement is guarded and the migrations can be re-run after a partial failure.

/** The DataSource's database, or null to use the connection's current one. */
function databaseOf(queryRunner: QueryRunner): string | null {
  return (queryRunner.connection.driver as { database?: string }).database ?? null;
}

function escape(queryRunner: QueryRunner, name: string): string {
  return queryRunner.connection.driver.escape(name);
}

/** The escaped table path for raw statements. */
export function mysqlTablePath(queryRunner: QueryRunner, tableName: string): string {
  const database = databaseOf(queryRunner);
  const table = escape(queryRunner, tableName);
  return database ? `${escape(queryRunner, database)}.${table}` : table;
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

/** `name type[(length|precision)] NULL|NOT NULL [DEFAULT ...]` for one column. */
function columnSql(queryRunner: QueryRunner, column: TableColumn): string {
  let type = column.type;
  if (column.length) type += `(${column.length})`;
  else if (column.precision !== undefined && column.precision !== null)
    type += `(${column.precision})`;
  const parts = [escape(queryRunner, column.name), type, column.isNullable ? 'NULL' : 'NOT NULL'];
  if (column.default !== undefined && column.default !== null)
    parts.push(`DEFAULT ${String(column.default)}`);
  return parts.join(' ');
}

/**
 * Creates the table when missing, InnoDB with utf8mb4 and a binary collation (exact, case-sensitive
 * comparisons, as on PostgreSQL). Foreign keys are never created on this family (SPEC §15.8).
 */
export async function mysqlEnsureTable(queryRunner: QueryRunner, definition: Table): Promise<void> {
  if (await mysqlHasTable(queryRunner, definition.name)) return;
  const primary = definition.columns
    .filter((column) => column.isPrimary)
    .map((column) => escape(queryRunner, column.name));
  const lines = definition.columns.map((column) => columnSql(queryRunner, column));
  if (primary.length > 0) lines.push(`PRIMARY KEY (${primary.join(', ')})`);
  await queryRunner.query(
    `CREATE TABLE IF NOT EXISTS ${mysqlTablePath(queryRunner, definition.name)} (${lines.join(', ')}) ` +
      'ENGINE=InnoDB DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin',
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
  const clauses = missing.map((column) => `ADD COLUMN ${columnSql(queryRunner, column)}`);
  await queryRunner.query(
    `ALTER TABLE ${mysqlTablePath(queryRunner, tableName)} ${clauses.join(', ')}`,
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
    const columns = index.columnNames.map((column) => escape(queryRunner, column)).join(', ');
    await queryRunner.query(
      `CREATE ${index.isUnique ? 'UNIQUE ' : ''}INDEX ${escape(queryRunner, index.name!)} ON ${mysqlTablePath(queryRunner, tableName)} (${columns})`,
    );
  }
}

/**
 * A uniqueness rule that holds only while a row is "active", where partial indexes do not exist
 * (SPEC §15.8): a stored generated BINARY(16) column that holds a hash of the key while the row is
 * active and NULL otherwise (NULLs never collide), with a unique index on it.
 */
export async function mysqlEnsureGeneratedUniqueKey(
  queryRunner: QueryRunner,
  tableName: string,
  key: { column: string; expression: string; index: string },
): Promise<void> {
  const path = mysqlTablePath(queryRunner, tableName);
  const column = escape(queryRunner, key.column);
  const index = escape(queryRunner, key.index);
  if (!(await mysqlHasColumn(queryRunner, tableName, key.column))) {
    await queryRunner.query(
      `ALTER TABLE ${path} ADD COLUMN ${column} BINARY(16) GENERATED ALWAYS AS (${key.expression}) STORED, ` +
        `ADD UNIQUE INDEX ${index} (${column})`,
    );
  } else if (!(await mysqlHasIndex(queryRunner, tableName, key.index))) {
    await queryRunner.query(`CREATE UNIQUE INDEX ${index} ON ${path} (${column})`);
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
        `DROP INDEX ${escape(queryRunner, name)} ON ${mysqlTablePath(queryRunner, tableName)}`,
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
  const clauses = present.map((name) => `DROP COLUMN ${escape(queryRunner, name)}`);
  await queryRunner.query(
    `ALTER TABLE ${mysqlTablePath(queryRunner, tableName)} ${clauses.join(', ')}`,
  );
}

export async function mysqlDropTableIfExists(
  queryRunner: QueryRunner,
  tableName: string,
): Promise<void> {
  await queryRunner.query(`DROP TABLE IF EXISTS ${mysqlTablePath(queryRunner, tableName)}`);
}
