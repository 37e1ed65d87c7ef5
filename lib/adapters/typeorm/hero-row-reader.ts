import type { DataSource, EntityMetadata } from 'typeorm';
import type { BoundStatement } from '../postgres/bound-statement.interface';

/** A hero to read beside a transaction's row locks, with the reader of its type. */
export interface HeroReadAhead {
  reader: HeroRowReader;
  heroType: string;
  heroId: string;
}

/** Stands in for the hero id while the statement text is built, to find its placeholder. */
const ID_PROBE = 'geneva-drive:hero-id';

/**
 * Reads a hero with a statement the library sends itself (beside its row locks, in one round
 * trip) and builds the entity as `SelectQueryBuilder.getOne()` does, through TypeORM's public
 * metadata API only: `EntityMetadata.create()` as TypeORM's deserializer calls it, then each
 * selected column's `Driver.prepareHydratedValue()` (types and transformers) and
 * `ColumnMetadata.setEntityValue()`.
 *
 * That is all `getOne()` does for an entity with nothing else to load, so only such entities get a
 * reader (`HeroRowReader.of` answers null otherwise): one regular table, a single primary column,
 * no relations, relation ids or counts, no embedded entities, no inheritance or tree, no virtual
 * or spatial columns (selected through expressions), no `@AfterLoad` listener, and a data source
 * with no query result cache. A subscriber with `afterLoad` turns it off at the call
 * (`available()`), since subscribers can be added at run time. The statement comes from a query
 * builder too, so soft deletes and `select: false` columns behave as in `getOne()`.
 */
export class HeroRowReader {
  private constructor(
    private readonly dataSource: DataSource,
    private readonly metadata: EntityMetadata,
    private readonly text: string,
    private readonly values: readonly unknown[],
    private readonly idIndex: number,
    private readonly columns: ReadonlyArray<readonly [string, EntityMetadata['columns'][number]]>,
  ) {}

  /** A reader for `metadata`'s entity, or null when `getOne()` would do more than one plain read. */
  static of(dataSource: DataSource, metadata: EntityMetadata): HeroRowReader | null {
    if (!readsAsOnePlainRow(dataSource, metadata)) return null;
    const primary = metadata.primaryColumns[0];
    const selected = metadata.columns.filter((column) => column.isSelect);
    const query = dataSource.createQueryBuilder(metadata.target, 'hero').select([]);
    selected.forEach((column, index) =>
      query.addSelect(`hero.${column.propertyPath}`, `c${index}`),
    );
    query.where(`hero.${primary.propertyPath} = :heroId`, { heroId: ID_PROBE });
    const [text, values] = query.getQueryAndParameters();
    const idIndex = values.indexOf(ID_PROBE);
    if (idIndex === -1 || values.lastIndexOf(ID_PROBE) !== idIndex) return null;
    return new HeroRowReader(
      dataSource,
      metadata,
      text,
      values,
      idIndex,
      selected.map((column, index) => [`c${index}`, column] as const),
    );
  }

  /** False while a subscriber with `afterLoad` is registered: `getOne()` must run it. */
  available(): boolean {
    return !this.dataSource.subscribers.some(
      (subscriber) => typeof subscriber.afterLoad === 'function',
    );
  }

  /** The read of the hero with this id, its id a bound parameter. */
  statement(heroId: string): BoundStatement {
    const values = [...this.values];
    values[this.idIndex] = heroId;
    return { text: this.text, values };
  }

  /** The entity `getOne()` would resolve for these rows of `statement()`, or null for none. */
  hydrate(rows: ReadonlyArray<Record<string, unknown>>): object | null {
    const row = rows[0];
    if (!row) return null;
    const entity = this.metadata.create(undefined, { fromDeserializer: true }) as object;
    let hasData = false;
    for (const [key, column] of this.columns) {
      const value = row[key];
      if (value === undefined) continue;
      if (value !== null) hasData = true;
      column.setEntityValue(entity, this.dataSource.driver.prepareHydratedValue(value, column));
    }
    return hasData ? entity : null;
  }
}

function readsAsOnePlainRow(dataSource: DataSource, metadata: EntityMetadata): boolean {
  const { driver } = dataSource;
  // Removed in TypeORM 1.x; still there on 0.3.
  const relationCounts = (metadata as { relationCounts?: readonly unknown[] }).relationCounts ?? [];
  return (
    metadata.tableType === 'regular' &&
    metadata.treeType === undefined &&
    metadata.discriminatorColumn === undefined &&
    metadata.childEntityMetadatas.length === 0 &&
    metadata.primaryColumns.length === 1 &&
    metadata.relations.length === 0 &&
    metadata.relationIds.length === 0 &&
    relationCounts.length === 0 &&
    metadata.embeddeds.length === 0 &&
    metadata.afterLoadListeners.length === 0 &&
    dataSource.queryResultCache === undefined &&
    metadata.columns.every(
      (column) =>
        !column.isVirtual &&
        !column.isVirtualProperty &&
        !driver.spatialTypes.includes(column.type),
    )
  );
}
