import type { EntityMetadata } from 'typeorm';
import type { PostgresLiterals } from './postgres-literals';
import type { LiteralStatement } from './postgres-prepared-statements';

/** What a criterion matches: one value, or any of a list (`IN`). */
export type Criterion = unknown;

/**
 * INSERT and UPDATE statements of the library's rows for PostgresQueryBatch, by property name,
 * with their values as literals. Templates are built once per shape (which columns, which
 * criteria): the same shape is the same string, which the prepared-statement lookup then finds
 * without hashing a new string.
 */
export class PostgresWriteStatements {
  private readonly templates = new Map<EntityMetadata, Map<string, string>>();

  constructor(private readonly literals: PostgresLiterals) {}

  /** `INSERT` of one row, with the columns TypeORM would insert (set and insertable). */
  insert(metadata: EntityMetadata, row: Record<string, unknown>): LiteralStatement {
    const columns = metadata.columns.filter(
      (column) => column.isInsert && row[column.propertyName] !== undefined,
    );
    const shape = `I ${columns.map((column) => column.propertyName).join(' ')}`;
    const template = this.template(metadata, shape, () => {
      const names = columns.map((column) => this.literals.identifier(column.databaseName));
      const slots = columns.map((_, index) => `$${index + 1}`);
      return `INSERT INTO ${this.literals.table(metadata)} (${names.join(', ')}) VALUES (${slots.join(', ')})`;
    });
    return {
      template,
      values: columns.map((column) =>
        this.literals.property(metadata, column.propertyName, row[column.propertyName]),
      ),
    };
  }

  /** `UPDATE … SET changes WHERE criteria`; `changes` holds only updatable columns. */
  update(
    metadata: EntityMetadata,
    criteria: Record<string, Criterion>,
    changes: Record<string, unknown>,
  ): LiteralStatement {
    const assigned = Object.keys(changes);
    const conditions = Object.entries(criteria);
    const shape =
      `U ${assigned.join(' ')} W ` +
      conditions
        .map(([property, value]) =>
          Array.isArray(value) ? `${property}[${value.length}]` : property,
        )
        .join(' ');
    const template = this.template(metadata, shape, () => {
      let slot = 0;
      const next = () => `$${++slot}`;
      const sets = assigned.map(
        (property) => `${this.literals.columnName(metadata, property)} = ${next()}`,
      );
      const wheres = conditions.map(([property, value]) =>
        Array.isArray(value)
          ? `${this.literals.columnName(metadata, property)} IN (${value.map(next).join(', ')})`
          : `${this.literals.columnName(metadata, property)} = ${next()}`,
      );
      return `UPDATE ${this.literals.table(metadata)} SET ${sets.join(', ')} WHERE ${wheres.join(' AND ')}`;
    });
    const values = assigned.map((property) =>
      this.literals.property(metadata, property, changes[property]),
    );
    for (const [property, value] of conditions) {
      if (Array.isArray(value))
        for (const item of value) values.push(this.literals.property(metadata, property, item));
      else values.push(this.literals.property(metadata, property, value));
    }
    return { template, values };
  }

  private template(metadata: EntityMetadata, shape: string, build: () => string): string {
    let byShape = this.templates.get(metadata);
    if (!byShape) this.templates.set(metadata, (byShape = new Map<string, string>()));
    let template = byShape.get(shape);
    if (template === undefined) byShape.set(shape, (template = build()));
    return template;
  }
}
