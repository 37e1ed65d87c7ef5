import { Table, TableColumn, TableForeignKey, TableIndex, type QueryRunner } from 'typeorm';
import { quoteIdentifier, quoteTable } from '../adapters/sql-identifiers';
import { columnOf, columnTypesFor, isMariaDb, migrationDialectOf } from './column-types';
import { JSON_COLUMNS } from './migration.constants';
import {
  mariadbEnsureJsonText,
  mariadbRestoreJsonType,
  mysqlDropColumnsIfExist,
  mysqlDropIndicesIfExist,
  mysqlDropTableIfExists,
  mysqlEnsureColumns,
  mysqlEnsureIndices,
  mysqlEnsureTable,
} from './mysql-schema';

// Every helper checks before it acts, so a migration re-run after a partial failure (or over a
// schema that already has some of its objects) completes instead of failing. Tables are always
// addressed by bare name: TypeORM resolves it against the DataSource's schema / search_path, and
// the drops on PostgreSQL quote the schema and table TypeORM resolved it to.
// MariaDB/MySQL takes the plain-SQL path of mysql-schema.ts (TypeORM's helpers cannot reload a
// table with a generated column there).

function isMysql(queryRunner: QueryRunner): boolean {
  return migrationDialectOf(queryRunner) === 'mysql';
}

// PostgreSQL drops by plain SQL too: TypeORM (0.3 and 1.1) pastes the schema name unquoted into its
// DROP INDEX / DROP TABLE / ALTER TABLE … DROP COLUMN, which breaks on a schema with a double quote.
function isPostgres(queryRunner: QueryRunner): boolean {
  return migrationDialectOf(queryRunner) === 'postgres';
}

/** Loads a table that the calling step has just ensured exists. */
async function loadTable(queryRunner: QueryRunner, tableName: string): Promise<Table> {
  const table = await queryRunner.getTable(tableName);
  if (!table) throw new Error(`Table ${tableName} does not exist`);
  return table;
}

/** True when `fk` is already present on `table` (matched by its columns, as names vary by driver). */
function hasForeignKey(table: Table, fk: TableForeignKey): boolean {
  const wanted = fk.columnNames.join(',');
  return table.foreignKeys.some((existing) => existing.columnNames.join(',') === wanted);
}

/**
 * Creates the table with its foreign keys, or adds any foreign key an existing table lacks.
 * MariaDB/MySQL gets no foreign keys (SPEC §15.8): the library deletes children itself.
 */
export async function ensureTable(queryRunner: QueryRunner, definition: Table): Promise<void> {
  if (isMysql(queryRunner)) return mysqlEnsureTable(queryRunner, definition);
  if (!(await queryRunner.hasTable(definition.name))) {
    // Indices are created separately by ensureIndices, so both paths share one guard.
    await queryRunner.createTable(definition, false, true, false);
    return;
  }
  const table = await loadTable(queryRunner, definition.name);
  for (const fk of definition.foreignKeys) {
    if (!hasForeignKey(table, fk)) await queryRunner.createForeignKey(table, fk);
  }
}

/** Adds the columns the table does not have yet, in one step (SQLite rebuilds the table per call). */
export async function ensureColumns(
  queryRunner: QueryRunner,
  tableName: string,
  columns: TableColumn[],
): Promise<void> {
  if (isMysql(queryRunner)) return mysqlEnsureColumns(queryRunner, tableName, columns);
  const table = await loadTable(queryRunner, tableName);
  const missing = columns.filter((column) => !table.findColumnByName(column.name));
  if (missing.length > 0) await queryRunner.addColumns(table, missing);
}

/** Creates each index whose name the table does not carry yet. */
export async function ensureIndices(
  queryRunner: QueryRunner,
  tableName: string,
  indices: TableIndex[],
): Promise<void> {
  if (isMysql(queryRunner)) return mysqlEnsureIndices(queryRunner, tableName, indices);
  for (const index of indices) {
    // Reloaded per index: some drivers rebuild the table object on every change.
    const table = await loadTable(queryRunner, tableName);
    if (!table.indices.some((existing) => existing.name === index.name)) {
      await queryRunner.createIndex(table, index);
    }
  }
}

/** Drops the named indices that exist; a missing table means there is nothing to drop. */
export async function dropIndicesIfExist(
  queryRunner: QueryRunner,
  tableName: string,
  names: string[],
): Promise<void> {
  if (isMysql(queryRunner)) return mysqlDropIndicesIfExist(queryRunner, tableName, names);
  for (const name of names) {
    const table = await queryRunner.getTable(tableName);
    const index = table?.indices.find((existing) => existing.name === name);
    if (!table || !index) continue;
    if (isPostgres(queryRunner)) {
      // The index lives in its table's schema.
      const owner = table.schema ? `${quoteIdentifier(table.schema)}.` : '';
      await queryRunner.query(`DROP INDEX ${owner}${quoteIdentifier(name)}`);
    } else {
      await queryRunner.dropIndex(table, index);
    }
  }
}

/** Drops the named columns that exist, in one step. */
export async function dropColumnsIfExist(
  queryRunner: QueryRunner,
  tableName: string,
  names: string[],
): Promise<void> {
  if (isMysql(queryRunner)) return mysqlDropColumnsIfExist(queryRunner, tableName, names);
  const table = await queryRunner.getTable(tableName);
  if (!table) return;
  const present = names
    .map((name) => table.findColumnByName(name))
    .filter((column): column is TableColumn => column !== undefined);
  if (present.length === 0) return;
  if (isPostgres(queryRunner)) {
    const drops = present.map((column) => `DROP COLUMN ${quoteIdentifier(column.name)}`);
    await queryRunner.query(
      `ALTER TABLE ${quoteTable({ schema: table.schema, tableName })} ${drops.join(', ')}`,
    );
  } else {
    await queryRunner.dropColumns(table, present);
  }
}

/** Drops the table with its indices and foreign keys when it exists. */
export async function dropTableIfExists(
  queryRunner: QueryRunner,
  tableName: string,
): Promise<void> {
  if (isMysql(queryRunner)) return mysqlDropTableIfExists(queryRunner, tableName);
  if (isPostgres(queryRunner)) {
    // Indices and foreign keys go with the table (CASCADE drops the keys that point at it).
    const table = await queryRunner.getTable(tableName);
    if (table)
      await queryRunner.query(
        `DROP TABLE ${quoteTable({ schema: table.schema, tableName })} CASCADE`,
      );
    return;
  }
  await queryRunner.dropTable(tableName, true, true, true);
}

/**
 * MariaDB: the table's JSON columns as plain LONGTEXT with a named JSON_VALID check, not MariaDB's
 * `json` type (mariadbEnsureJsonText says why). A no-op on MySQL (LONGTEXT already), PostgreSQL and
 * SQLite.
 */
export async function ensureJsonText(queryRunner: QueryRunner, tableName: string): Promise<void> {
  if (!isMysql(queryRunner) || !isMariaDb(queryRunner)) return;
  const t = columnTypesFor(queryRunner);
  const columns = JSON_COLUMNS[tableName].map(
    (name) => new TableColumn(columnOf(name, t.json, { isNullable: true })),
  );
  await mariadbEnsureJsonText(queryRunner, tableName, columns);
}

/** MariaDB: the table's JSON columns back to MariaDB's `json` type; a no-op elsewhere. */
export async function restoreJsonType(queryRunner: QueryRunner, tableName: string): Promise<void> {
  if (!isMysql(queryRunner) || !isMariaDb(queryRunner)) return;
  await mariadbRestoreJsonType(queryRunner, tableName, [...JSON_COLUMNS[tableName]]);
}
