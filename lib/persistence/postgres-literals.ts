import type { DataSource, EntityMetadata } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';

/** The `pg` module as TypeORM's PostgreSQL driver exposes it (`driver.postgres`). */
interface PgModule {
  escapeLiteral(value: string): string;
  escapeIdentifier(value: string): string;
}

/** Column types whose values the driver passes through unchanged when they are strings. */
const TEXT_TYPES = new Set<unknown>(['varchar', 'character varying', 'text', 'uuid', String]);
/** Column types whose Date values the driver passes through unchanged. */
const INSTANT_TYPES = new Set<unknown>(['timestamp with time zone', 'timestamptz', Date]);

/**
 * Values written as escaped literals, for statements sent together in one simple-query message
 * (which carries no bound parameters): an entity property goes through its column's transformer
 * and the driver's conversion exactly as TypeORM would bind it (strings and instants of plain
 * columns, which the driver leaves alone, skip that detour). Quoted names too, computed once.
 */
export class PostgresLiterals {
  private readonly pg: PgModule;
  private readonly tables = new Map<EntityMetadata, string>();
  private readonly columns = new Map<EntityMetadata, Map<string, ColumnMetadata>>();
  private readonly identifiers = new Map<string, string>();

  constructor(private readonly dataSource: DataSource) {
    this.pg = (dataSource.driver as unknown as { postgres: PgModule }).postgres;
  }

  /** The value of an entity property, as a literal of its column. */
  property(metadata: EntityMetadata, property: string, value: unknown): string {
    const column = this.column(metadata, property);
    if (!column.transformer) {
      if (value === null || value === undefined) return 'NULL';
      if (typeof value === 'string' && TEXT_TYPES.has(column.type))
        return this.pg.escapeLiteral(value);
      // An ISO 8601 instant holds neither quotes nor backslashes.
      if (value instanceof Date && INSTANT_TYPES.has(column.type) && !Number.isNaN(value.getTime()))
        return `'${value.toISOString()}'`;
    }
    const prepared: unknown = this.dataSource.driver.preparePersistentValue(value, column);
    if (prepared === null || prepared === undefined) return 'NULL';
    if (prepared instanceof Date) return this.pg.escapeLiteral(prepared.toISOString());
    if (typeof prepared === 'string') return this.pg.escapeLiteral(prepared);
    if (typeof prepared === 'number' || typeof prepared === 'boolean')
      return this.pg.escapeLiteral(String(prepared));
    return this.pg.escapeLiteral(JSON.stringify(prepared));
  }

  identifier(name: string): string {
    let quoted = this.identifiers.get(name);
    if (quoted === undefined) this.identifiers.set(name, (quoted = this.pg.escapeIdentifier(name)));
    return quoted;
  }

  /** The entity's table, schema-qualified when it has a schema. */
  table(metadata: EntityMetadata): string {
    let table = this.tables.get(metadata);
    if (table === undefined) {
      table = metadata.tablePath
        .split('.')
        .map((part) => this.identifier(part))
        .join('.');
      this.tables.set(metadata, table);
    }
    return table;
  }

  /** The quoted column name of an entity property. */
  columnName(metadata: EntityMetadata, property: string): string {
    return this.identifier(this.column(metadata, property).databaseName);
  }

  column(metadata: EntityMetadata, property: string): ColumnMetadata {
    let byProperty = this.columns.get(metadata);
    if (!byProperty) this.columns.set(metadata, (byProperty = new Map<string, ColumnMetadata>()));
    let column = byProperty.get(property);
    if (!column) {
      column = metadata.findColumnWithPropertyName(property);
      if (!column) throw new Error(`${metadata.name} has no column for property '${property}'`);
      byProperty.set(property, column);
    }
    return column;
  }
}
