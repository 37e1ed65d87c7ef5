import type { DataSource, EntityMetadata, EntityTarget, ObjectLiteral, QueryRunner } from 'typeorm';

/** What a criterion matches: one value, or any of a list (`IN`). */
type Criterion = unknown;

/** The `pg` helper the driver exposes (`driver.postgres`). */
interface PgModule {
  escapeLiteral(value: string): string;
  escapeIdentifier(value: string): string;
}

/**
 * PostgreSQL write-behind for the runner's transactions. Every round trip costs far more than the
 * statement itself on the hot path, so writes are held back and sent together in one simple-query
 * message: just before the next read on the transaction's connection (reads always see the
 * transaction's own writes), or together with the COMMIT. Values are written as escaped literals
 * (the simple-query protocol carries no parameters), after the column's transformer and the
 * driver's own conversion, exactly as TypeORM would bind them. A failed batch fails the
 * transaction, which rolls back as usual; a rollback drops what is still pending.
 */
export class PostgresWriteBatch {
  private readonly pending: string[] = [];
  private readonly pg: PgModule;

  constructor(
    private readonly dataSource: DataSource,
    /** The library's table names, as they appear in SQL text. */
    private readonly ownTables: readonly string[],
  ) {
    this.pg = (dataSource.driver as unknown as { postgres: PgModule }).postgres;
  }

  /** Routes every query of `queryRunner` through the batch. */
  attach(queryRunner: QueryRunner): void {
    const original = queryRunner.query.bind(queryRunner);
    const send = async (
      query: string,
      parameters?: unknown[],
      structured?: boolean,
    ): Promise<unknown> =>
      (await (structured
        ? original(query, parameters, true)
        : original(query, parameters))) as unknown;
    const batched = async (
      query: string,
      parameters?: unknown[],
      structured?: boolean,
    ): Promise<unknown> => {
      if (this.pending.length === 0 || this.cannotSeePending(query))
        return send(query, parameters, structured);
      const batch = this.pending.splice(0);
      if (query === 'COMMIT') return send([...batch, 'COMMIT'].join(';\n'));
      if (!query.startsWith('ROLLBACK')) await send(batch.join(';\n'));
      return send(query, parameters, structured);
    };
    queryRunner.query = batched as QueryRunner['query'];
  }

  /**
   * A plain SELECT naming none of the library's tables (a hero load) cannot observe the pending
   * writes, so it need not wait for them.
   */
  private cannotSeePending(query: string): boolean {
    return /^\s*SELECT\b/i.test(query) && !this.ownTables.some((table) => query.includes(table));
  }

  /** `UPDATE … SET changes WHERE criteria` (changes and criteria by property name). */
  update<E extends ObjectLiteral>(
    target: EntityTarget<E>,
    criteria: Record<string, Criterion>,
    changes: Partial<E>,
  ): void {
    const metadata = this.dataSource.getMetadata(target);
    const assignments = Object.entries(changes)
      .filter(
        ([property, value]) => value !== undefined && this.column(metadata, property).isUpdate,
      )
      .map(
        ([property, value]) =>
          `${this.name(metadata, property)} = ${this.literal(metadata, property, value)}`,
      );
    if (assignments.length === 0) return;
    this.pending.push(
      `UPDATE ${this.table(metadata)} SET ${assignments.join(', ')} WHERE ${this.where(metadata, criteria)}`,
    );
  }

  /** `INSERT` of one row, with the columns TypeORM would insert. */
  insert<E extends ObjectLiteral>(target: EntityTarget<E>, row: E): void {
    const metadata = this.dataSource.getMetadata(target);
    const columns = metadata.columns.filter(
      (column) => column.isInsert && row[column.propertyName] !== undefined,
    );
    const names = columns.map((column) => this.pg.escapeIdentifier(column.databaseName));
    const values = columns.map((column) =>
      this.literal(metadata, column.propertyName, row[column.propertyName]),
    );
    this.pending.push(
      `INSERT INTO ${this.table(metadata)} (${names.join(', ')}) VALUES (${values.join(', ')})`,
    );
  }

  private where(metadata: EntityMetadata, criteria: Record<string, Criterion>): string {
    return Object.entries(criteria)
      .map(([property, value]) =>
        Array.isArray(value)
          ? `${this.name(metadata, property)} IN (${value.map((item) => this.literal(metadata, property, item)).join(', ')})`
          : `${this.name(metadata, property)} = ${this.literal(metadata, property, value)}`,
      )
      .join(' AND ');
  }

  private literal(metadata: EntityMetadata, property: string, value: unknown): string {
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

  private column(metadata: EntityMetadata, property: string) {
    const column = metadata.findColumnWithPropertyName(property);
    if (!column) throw new Error(`${metadata.name} has no column for property '${property}'`);
    return column;
  }

  private name(metadata: EntityMetadata, property: string): string {
    return this.pg.escapeIdentifier(this.column(metadata, property).databaseName);
  }

  private table(metadata: EntityMetadata): string {
    return metadata.tablePath
      .split('.')
      .map((part) => this.pg.escapeIdentifier(part))
      .join('.');
  }
}
