import type { DataSource, EntityMetadata, ObjectLiteral, QueryRunner } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import type { PostgresLiterals } from './postgres-literals';
import type { LiteralStatement } from './postgres-prepared-statements';

/**
 * `SELECT` of one row of a library table by primary key, with the columns TypeORM would select,
 * `FOR UPDATE` when `lock`.
 */
export function selectById(
  metadata: EntityMetadata,
  literals: PostgresLiterals,
  id: string,
  lock: boolean,
): LiteralStatement {
  const columns = metadata.columns
    .filter((column) => column.isSelect)
    .map((column) => literals.identifier(column.databaseName));
  const primary = metadata.primaryColumns[0];
  return {
    template:
      `SELECT ${columns.join(', ')} FROM ${literals.table(metadata)} ` +
      `WHERE ${literals.identifier(primary.databaseName)} = $1${lock ? ' FOR UPDATE' : ''}`,
    values: [literals.property(metadata, primary.propertyName, id)],
  };
}

/**
 * An entity from a selected row, each value hydrated as TypeORM's result transformer does
 * (`columns`: the ones selected, by default every column).
 */
export function hydrateRow<E extends ObjectLiteral>(
  dataSource: DataSource,
  metadata: EntityMetadata,
  row: Record<string, unknown>,
  columns: readonly ColumnMetadata[] = metadata.columns,
  queryRunner?: QueryRunner,
): E {
  const entity = metadata.create(queryRunner, { fromDeserializer: true }) as E;
  for (const column of columns) {
    const value = row[column.databaseName];
    if (value === undefined) continue;
    column.setEntityValue(entity, dataSource.driver.prepareHydratedValue(value, column));
  }
  return entity;
}
