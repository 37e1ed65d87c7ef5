import type { EntityMetadata, ValueTransformer } from 'typeorm';
import { InvalidArgumentError } from '../../errors/invalid-argument.error';
import type {
  SignalState,
  StepExecutionState,
  WorkflowState,
} from '../../interfaces/states.interface';
import type { SchemaFeatures } from '../../ports/workflow.repository';
import { isColumnPresent } from '../optional-columns';
import type { BoundStatement } from './bound-statement.interface';
import { quoteIdentifier, quoteTable } from '../sql-identifiers';

/** What a criterion matches: one value, any of a list (`IN`), or states written as literals. */
export type Criterion = unknown;

const STATE_NAME = /^[a-z_]+$/;

/**
 * States the library's own code fixes for a statement (`'scheduled'`, `'waiting'`), written into
 * its text instead of bound. A named statement (`preparedStatements: true`) may run a generic
 * plan, built without its parameters' values: a bound state reads as any state there, and on a
 * long workflow the plan then walks every execution of it. A literal lets the plan seek
 * `(workflow_id, state)`. Lower-case names only: this never carries a caller's value.
 */
export class StateLiterals {
  readonly states: readonly string[];

  constructor(states: readonly string[]) {
    const invalid = states.find((state) => !STATE_NAME.test(state));
    if (states.length === 0 || invalid !== undefined)
      throw new Error(`StateLiterals takes lower-case state names, got '${String(invalid)}'.`);
    this.states = states;
  }

  /** `'a', 'b'`: the list inside `IN (…)`. */
  get listSql(): string {
    return this.states.map((state) => `'${state}'`).join(', ');
  }
}

/** A criterion matching any of `states`, written into the statement's text (`StateLiterals`). */
export const stateLiterals = (
  ...states: Array<StepExecutionState | WorkflowState | SignalState>
): StateLiterals => new StateLiterals(states);

/** The condition and `FROM` items of an `insertSelect` statement, written by its caller. */
export interface InsertSelectClauses {
  whereSql: string;
  fromSql?: string;
}

/**
 * The transaction-local setting a step transaction that guessed its rows sets to its token when
 * its fence holds (see `PostgresQueryBatch.guess`); fenced writes compare it with the token.
 */
export const STEP_FENCE_SETTING = 'geneva_drive.step_fence';

/** The fence's condition, its setting's name and the token bound at `$nameSlot`, `$nameSlot + 1`. */
function fenceCondition(nameSlot: number): string {
  return `current_setting($${nameSlot}, true) = $${nameSlot + 1}`;
}

/** One column of a library table, as the hot path reads and writes it. */
interface LibraryColumn {
  property: string;
  databaseName: string;
  quoted: string;
  json: boolean;
  transformer: ValueTransformer | null;
  /** Nullable, without a default or a transformer: an INSERT that leaves it out stores NULL. */
  nullByDefault: boolean;
}

/**
 * One of the library's own tables (workflows, step executions, signals) on PostgreSQL's hot path:
 * SELECT, INSERT and UPDATE statements by entity property, with every value a bound parameter in
 * text form, and rows hydrated into entities. Names come from the entity's metadata (read only),
 * quoted by `quoteIdentifier`; statement texts are built once per shape, so named statements
 * (`preparedStatements: true`) find them again. Columns of a migration that has not run are left
 * out of every statement.
 */
export class LibraryTable<E extends object> {
  private readonly quotedTable: string;
  private readonly allColumns: LibraryColumn[];
  private readonly byProperty: Map<string, LibraryColumn>;
  private readonly texts = new Map<string, string>();
  /** The columns that exist under the last features seen (`columns()`). */
  private present: { features: SchemaFeatures; columns: LibraryColumn[] } | null = null;

  constructor(
    metadata: EntityMetadata,
    private readonly entity: new () => E,
    private readonly features: () => SchemaFeatures,
  ) {
    this.quotedTable = quoteTable({ schema: metadata.schema, tableName: metadata.tableName });
    this.allColumns = metadata.columns.map((column) => ({
      property: column.propertyName,
      databaseName: column.databaseName,
      quoted: quoteIdentifier(column.databaseName),
      json: column.type === 'json' || column.type === 'jsonb',
      transformer: singleTransformer(column.transformer),
      nullByDefault:
        column.isNullable &&
        column.default === undefined &&
        !column.isGenerated &&
        !column.transformer,
    }));
    this.byProperty = new Map(this.allColumns.map((column) => [column.property, column]));
  }

  /** `SELECT` of one row by id (`FOR UPDATE` when `lock`). */
  selectById(id: string, lock: boolean): BoundStatement {
    const columns = this.columns();
    const shape = `S ${lock} ${columns.length}`;
    const text = this.text(shape, () => {
      const list = columns.map((column) => column.quoted).join(', ');
      return `SELECT ${list} FROM ${this.quotedTable} WHERE ${this.column('id').quoted} = $1${lock ? ' FOR UPDATE' : ''}`;
    });
    return { text, values: [id] };
  }

  /**
   * `SELECT` of the rows equal to `criteria` (by property), ordered by `orderBy` ascending
   * (`FOR UPDATE` when `lock`).
   */
  selectWhere(
    criteria: Record<string, string | StateLiterals>,
    orderBy: readonly string[],
    lock: boolean,
  ): BoundStatement {
    const conditions = Object.entries(criteria).map(
      ([property, value]) => [this.column(property), value] as const,
    );
    const bound = conditions.filter(
      (condition): condition is readonly [LibraryColumn, string] =>
        typeof condition[1] === 'string',
    );
    const order = orderBy.map((property) => this.column(property));
    const columns = this.columns();
    const shape =
      `W ${lock} ${conditions.map(([column, value]) => criterionShape(column, value)).join(' ')} ` +
      `O ${order.map((column) => column.property).join(' ')}`;
    const text = this.text(shape, () => {
      const list = columns.map((column) => column.quoted).join(', ');
      let slot = 0;
      const wheres = conditions
        .map(([column, value]) =>
          value instanceof StateLiterals
            ? `${column.quoted} IN (${value.listSql})`
            : `${column.quoted} = $${++slot}`,
        )
        .join(' AND ');
      const ordering =
        order.length > 0
          ? ` ORDER BY ${order.map((column) => `${column.quoted} ASC`).join(', ')}`
          : '';
      return `SELECT ${list} FROM ${this.quotedTable} WHERE ${wheres}${ordering}${lock ? ' FOR UPDATE' : ''}`;
    });
    return { text, values: bound.map(([column, value]) => this.parameter(column, value)) };
  }

  /**
   * `INSERT` of one row: the properties it sets (undefined ones are left to their default, null
   * ones to the NULL a column without a default takes: fewer parameters to parse and bind). With
   * `fenceToken`, the row goes in only where the transaction's step fence holds that token.
   */
  insert(row: Record<string, unknown>, fenceToken?: string): BoundStatement {
    const columns = this.columns().filter((column) => this.written(column, row));
    const fenced = fenceToken !== undefined;
    const shape = `I${fenced ? 'F' : ''} ${columns.map((column) => column.property).join(' ')}`;
    const text = this.text(shape, () => {
      const names = columns.map((column) => column.quoted).join(', ');
      const slots = columns.map((_, index) => `$${index + 1}`).join(', ');
      return fenced
        ? `INSERT INTO ${this.quotedTable} (${names}) SELECT ${slots} WHERE ${fenceCondition(columns.length + 1)}`
        : `INSERT INTO ${this.quotedTable} (${names}) VALUES (${slots})`;
    });
    const values = columns.map((column) => this.parameter(column, row[column.property]));
    return { text, values: fenced ? [...values, STEP_FENCE_SETTING, fenceToken] : values };
  }

  /**
   * `INSERT` of many rows in one statement with one bound parameter: the rows as a JSON array,
   * read back by `json_populate_recordset` into the table's own row type, so PostgreSQL converts
   * each value as its column's input would, and the statement's text does not grow with the rows
   * (a bulk start's parse costs nothing, and a named statement serves every batch size). The
   * columns are those some row sets to a value: the others take their default, NULL.
   */
  insertMany(entities: readonly E[]): BoundStatement {
    const rows = entities as readonly Record<string, unknown>[];
    const columns = this.columns().filter((column) =>
      rows.some((row) => row[column.property] !== undefined && row[column.property] !== null),
    );
    const shape = `IM ${columns.map((column) => column.property).join(' ')}`;
    const text = this.text(shape, () => {
      const names = columns.map((column) => column.quoted).join(', ');
      return `INSERT INTO ${this.quotedTable} (${names}) SELECT ${names} FROM json_populate_recordset(NULL::${this.quotedTable}, $1)`;
    });
    // A bulk's rows share their timestamps (one clock reading per call): each is formatted once.
    const isoByTime = new Map<number, string>();
    const records = rows.map((row) => {
      const record: Record<string, unknown> = {};
      for (const column of columns)
        record[column.databaseName] = this.jsonValue(column, row, isoByTime);
      return record;
    });
    return { text, values: [JSON.stringify(records)] };
  }

  /**
   * `EXISTS (SELECT 1 FROM … WHERE …)` over `criteria` (by property, each equal), its placeholders
   * numbered from `$placeholdersBefore + 1`: a condition of a fence. With `lock`, the row found is
   * locked (`FOR UPDATE`); a row another transaction changed is checked again as it committed.
   */
  existsWhere(
    criteria: Record<string, unknown>,
    placeholdersBefore: number,
    lock = false,
  ): { sql: string; values: Array<string | null> } {
    const conditions = Object.keys(criteria).map((property) => this.column(property));
    const shape =
      `E${lock ? 'L' : ''} ${conditions.map((column) => column.property).join(' ')} ` +
      `${placeholdersBefore}`;
    const sql = this.text(
      shape,
      () =>
        `EXISTS (SELECT 1 FROM ${this.quotedTable} WHERE ` +
        conditions
          .map((column, index) => `${column.quoted} = $${placeholdersBefore + index + 1}`)
          .join(' AND ') +
        `${lock ? ' FOR UPDATE' : ''})`,
    );
    return {
      sql,
      values: conditions.map((column) => this.parameter(column, criteria[column.property])),
    };
  }

  /**
   * `INSERT … SELECT` of one row, only where the guard holds, a row that a unique index already
   * holds skipped. `computedSql` gives columns (by property) a value computed in the statement
   * instead of `row`'s (from the `FROM` items; no placeholders); `clauses(n)` writes the
   * condition and the `FROM` items, their placeholders numbered from `$n + 1`, after the row's
   * (their values: `values`). PostgreSQL types each of the row's parameters as its target
   * column, as in `insert`.
   */
  insertSelect(
    row: Record<string, unknown>,
    computedSql: Readonly<Record<string, string>>,
    clauses: (placeholdersBefore: number) => InsertSelectClauses,
    values: readonly unknown[],
  ): BoundStatement {
    const columns = this.columns().filter(
      (column) => this.written(column, row) || column.property in computedSql,
    );
    const bound = columns.filter((column) => !(column.property in computedSql));
    const { whereSql, fromSql } = clauses(bound.length);
    const shape =
      `IS ${columns.map((column) => column.property).join(' ')} ${whereSql} ${fromSql ?? ''} ` +
      Object.entries(computedSql).join(' ');
    const text = this.text(shape, () => {
      const quotedColumns = columns.map((column) => column.quoted).join(', ');
      const selectedColumns = columns
        .map((column) => computedSql[column.property] ?? `$${bound.indexOf(column) + 1}`)
        .join(', ');
      return (
        `INSERT INTO ${this.quotedTable} (${quotedColumns}) SELECT ${selectedColumns}` +
        `${fromSql ? ` FROM ${fromSql}` : ''} WHERE ${whereSql} ON CONFLICT DO NOTHING`
      );
    });
    return {
      text,
      values: [...bound.map((column) => this.parameter(column, row[column.property])), ...values],
    };
  }

  /** Whether an INSERT of `row` names `column`: it has a value NULL by default would not give. */
  private written(column: LibraryColumn, row: Record<string, unknown>): boolean {
    const value = row[column.property];
    return value !== undefined && !(value === null && column.nullByDefault);
  }

  /** The table's name, quoted (with its schema when it has one). */
  get quotedName(): string {
    return this.quotedTable;
  }

  /** A property's column name. */
  columnName(property: string): string {
    return this.column(property).databaseName;
  }

  /** `alias."column", …` of every column that exists now: a whole row's `RETURNING` list. */
  wholeRowList(alias: string): string {
    return this.columns()
      .map((column) => `${alias}.${column.quoted}`)
      .join(', ');
  }

  /** `alias."column", …` of the properties' columns: a select or `RETURNING` list. */
  columnList(alias: string, properties: readonly string[]): string {
    return properties.map((property) => `${alias}.${this.column(property).quoted}`).join(', ');
  }

  /**
   * `UPDATE … SET changes WHERE criteria`, by property (a list criterion is an `IN`). With
   * `fenceToken`, only where the transaction's step fence holds that token.
   */
  update(
    criteria: Record<string, Criterion>,
    changes: Record<string, unknown>,
    fenceToken?: string,
  ): BoundStatement {
    const assigned = Object.keys(changes).map((property) => this.column(property));
    const conditions = Object.entries(criteria).map(
      ([property, value]) => [this.column(property), value] as const,
    );
    const shape =
      `U ${assigned.map((column) => column.property).join(' ')} W ` +
      conditions.map(([column, value]) => criterionShape(column, value)).join(' ') +
      (fenceToken === undefined ? '' : ' F');
    const text = this.text(shape, () => {
      let slot = 0;
      const next = () => `$${++slot}`;
      const sets = assigned.map((column) => `${column.quoted} = ${next()}`).join(', ');
      const wheres = conditions
        .map(([column, value]) =>
          value instanceof StateLiterals
            ? `${column.quoted} IN (${value.listSql})`
            : Array.isArray(value)
              ? `${column.quoted} IN (${value.map(next).join(', ')})`
              : `${column.quoted} = ${next()}`,
        )
        .join(' AND ');
      const fence = fenceToken === undefined ? '' : ` AND ${fenceCondition(slot + 1)}`;
      return `UPDATE ${this.quotedTable} SET ${sets} WHERE ${wheres}${fence}`;
    });
    const values = assigned.map((column) => this.parameter(column, changes[column.property]));
    for (const [column, value] of conditions) {
      if (value instanceof StateLiterals) continue;
      for (const item of Array.isArray(value) ? (value as unknown[]) : [value])
        values.push(this.parameter(column, item));
    }
    if (fenceToken !== undefined) values.push(STEP_FENCE_SETTING, fenceToken);
    return { text, values };
  }

  /** Whether the property's column exists now (its migration may not have run). */
  writes(property: string): boolean {
    const column = this.byProperty.get(property);
    return column !== undefined && isColumnPresent(this.features(), column.databaseName);
  }

  /** An entity from a row this table's statements selected. */
  hydrate(row: Record<string, unknown>): E {
    const entity = new this.entity() as Record<string, unknown>;
    for (const column of this.allColumns) {
      const value = row[column.databaseName];
      if (value === undefined) continue;
      entity[column.property] = column.transformer ? column.transformer.from(value) : value;
    }
    return entity as E;
  }

  private columns(): LibraryColumn[] {
    const features = this.features();
    // Every statement asks, and the schema's features change only when a migration is detected.
    if (this.present?.features !== features)
      this.present = {
        features,
        columns: this.allColumns.filter((column) => isColumnPresent(features, column.databaseName)),
      };
    return this.present.columns;
  }

  private column(property: string): LibraryColumn {
    const column = this.byProperty.get(property);
    if (!column) throw new Error(`${this.entity.name} has no column for property '${property}'`);
    return column;
  }

  private text(shape: string, build: () => string): string {
    const key = `${shape}|${this.columns().length}`;
    let text = this.texts.get(key);
    if (text === undefined) this.texts.set(key, (text = build()));
    return text;
  }

  /**
   * A row's value of a column inside `insertMany`'s JSON: a JSON column's value as JSON itself,
   * any other as its text parameter.
   */
  private jsonValue(
    column: LibraryColumn,
    row: Record<string, unknown>,
    isoByTime: Map<number, string>,
  ): unknown {
    const value = row[column.property];
    if (value instanceof Date && !column.transformer && !Number.isNaN(value.getTime())) {
      let iso = isoByTime.get(value.getTime());
      if (iso === undefined) isoByTime.set(value.getTime(), (iso = value.toISOString()));
      return iso;
    }
    if (!column.json) return this.parameter(column, value);
    const stored = column.transformer ? (column.transformer.to(value) as unknown) : value;
    return stored === undefined ? null : stored;
  }

  /** A value as a text-format parameter of its column. */
  private parameter(column: LibraryColumn, value: unknown): string | null {
    const stored = column.transformer ? (column.transformer.to(value) as unknown) : value;
    if (stored === null || stored === undefined) return null;
    if (column.json) return JSON.stringify(stored);
    if (typeof stored === 'string') return stored;
    if (stored instanceof Date) {
      if (Number.isNaN(stored.getTime()))
        throw new InvalidArgumentError(
          `${this.entity.name}.${column.property} is an invalid Date.`,
        );
      return stored.toISOString();
    }
    if (typeof stored === 'number' || typeof stored === 'boolean') return String(stored);
    throw new InvalidArgumentError(
      `${this.entity.name}.${column.property} cannot be stored: ${typeof stored} is not a column value.`,
    );
  }
}

/** A criterion's part of a statement's shape: its text differs by list length and literals. */
function criterionShape(column: LibraryColumn, value: Criterion): string {
  if (value instanceof StateLiterals) return `${column.property}=${value.states.join(',')}`;
  return Array.isArray(value) ? `${column.property}[${value.length}]` : column.property;
}

function singleTransformer(
  transformer: ValueTransformer | ValueTransformer[] | undefined,
): ValueTransformer | null {
  if (!transformer) return null;
  if (!Array.isArray(transformer)) return transformer;
  if (transformer.length === 0) return null;
  return {
    to: (value: unknown) =>
      transformer.reduce((current, step) => step.to(current) as unknown, value),
    from: (value: unknown) =>
      transformer.reduceRight((current, step) => step.from(current) as unknown, value),
  };
}
