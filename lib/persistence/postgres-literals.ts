import type { DataSource, EntityMetadata } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { closingQuote, type LiteralStatement } from './postgres-prepared-statements';

/** The `pg` module as TypeORM's PostgreSQL driver exposes it (`driver.postgres`). */
interface PgModule {
  escapeLiteral(value: string): string;
  escapeIdentifier(value: string): string;
}

/** node-postgres's own conversion of a bound value to the text it sends. */
type PrepareValue = (value: unknown) => unknown;

// eslint-disable-next-line @typescript-eslint/no-require-imports -- pg ships no typings for its utils
const { prepareValue } = require('pg/lib/utils') as { prepareValue: PrepareValue };

/**
 * SQL text with values written as escaped literals, for statements sent together in one
 * simple-query message (which carries no bound parameters). Values are converted exactly as they
 * would be bound: an entity property through its column's transformer and the driver, a query
 * parameter through node-postgres's own text conversion.
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

  /**
   * A bound query (TypeORM's SQL and parameters) as a statement with literal values, or null when
   * that cannot be done safely: a parameter without a text form (a Buffer), or SQL holding string
   * literals or dollar signs other than in-range placeholders (TypeORM's generated reads hold neither).
   */
  statementOf(sql: string, parameters: readonly unknown[]): LiteralStatement | null {
    if (sql.includes("'")) return null;
    const values: string[] = [];
    for (const parameter of parameters) {
      const text = prepareValue(parameter);
      if (text !== null && typeof text !== 'string') return null;
      values.push(text === null ? 'NULL' : this.pg.escapeLiteral(text));
    }
    for (let index = 0; index < sql.length; index++) {
      if (sql[index] === '"') {
        index = closingQuote(sql, index);
        if (index >= sql.length) return null;
      } else if (sql[index] === '$') {
        const position = Number(/^\d+/.exec(sql.slice(index + 1))?.[0] ?? 0);
        if (position < 1 || position > values.length) return null;
      }
    }
    return { template: sql, values };
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
