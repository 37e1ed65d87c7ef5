import type { DataSource, EntityMetadata } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';

/** The `pg` module as TypeORM's PostgreSQL driver exposes it (`driver.postgres`). */
interface PgModule {
  escapeLiteral(value: string): string;
  escapeIdentifier(value: string): string;
}

/**
 * Values written as escaped literals, for statements sent together in one simple-query message
 * (which carries no bound parameters): an entity property goes through its column's transformer
 * and the driver's conversion exactly as TypeORM would bind it. Quoted names too.
 */
export class PostgresLiterals {
  private readonly pg: PgModule;

  constructor(private readonly dataSource: DataSource) {
    this.pg = (dataSource.driver as unknown as { postgres: PgModule }).postgres;
  }

  /** The value of an entity property, as a literal of its column. */
  property(metadata: EntityMetadata, property: string, value: unknown): string {
    const prepared: unknown = this.dataSource.driver.preparePersistentValue(
      value,
      this.column(metadata, property),
    );
    if (prepared === null || prepared === undefined) return 'NULL';
    if (prepared instanceof Date) return this.pg.escapeLiteral(prepared.toISOString());
    if (typeof prepared === 'string') return this.pg.escapeLiteral(prepared);
    if (typeof prepared === 'number' || typeof prepared === 'boolean')
      return this.pg.escapeLiteral(String(prepared));
    return this.pg.escapeLiteral(JSON.stringify(prepared));
  }

  identifier(name: string): string {
    return this.pg.escapeIdentifier(name);
  }

  /** The entity's table, schema-qualified when it has a schema. */
  table(metadata: EntityMetadata): string {
    return metadata.tablePath
      .split('.')
      .map((part) => this.pg.escapeIdentifier(part))
      .join('.');
  }

  /** The quoted column name of an entity property. */
  columnName(metadata: EntityMetadata, property: string): string {
    return this.pg.escapeIdentifier(this.column(metadata, property).databaseName);
  }

  column(metadata: EntityMetadata, property: string): ColumnMetadata {
    const column = metadata.findColumnWithPropertyName(property);
    if (!column) throw new Error(`${metadata.name} has no column for property '${property}'`);
    return column;
  }
}
