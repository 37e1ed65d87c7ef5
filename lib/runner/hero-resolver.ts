import { Injectable } from '@nestjs/common';
import type { EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { isUuid } from '../common/uuid';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { StepConfigurationError } from '../errors/step-configuration.error';
import { GenevaDriveDataSource } from '../persistence/geneva-drive-data-source';
import type { LiteralStatement } from '../persistence/postgres-prepared-statements';
import type { PgResult } from '../persistence/postgres-query-batch';
import { hydrateRow } from '../persistence/row-reads';
import type { UnitOfWork } from '../persistence/unit-of-work';

/** How a hero is stored on a workflow row. */
export interface HeroIdentity {
  heroType: string;
  heroId: string;
}

/**
 * Maps heroes to `(hero_type, hero_id)` and back: `hero_type` is the TypeORM entity metadata name,
 * `hero_id` the single primary column as a string.
 */
@Injectable()
export class HeroResolver {
  constructor(private readonly database: GenevaDriveDataSource) {}

  identify(hero: object, definition?: WorkflowDefinition): HeroIdentity {
    const metadata = this.metadataOf(hero, definition);
    if (metadata.primaryColumns.length !== 1) {
      throw new InvalidArgumentError(
        `The hero ${metadata.name} has a composite primary key (${metadata.primaryColumns.map((c) => c.propertyName).join(', ')}); heroes need a single primary column.`,
      );
    }
    const id: unknown = metadata.primaryColumns[0].getEntityValue(hero);
    if (typeof id === 'number' || typeof id === 'bigint' || (typeof id === 'string' && id !== '')) {
      return { heroType: metadata.name, heroId: String(id) };
    }
    throw new InvalidArgumentError(
      id === undefined || id === null || id === ''
        ? `The hero ${metadata.name} has no primary key value yet; save it before starting a workflow for it.`
        : `The hero ${metadata.name} has a primary key that is not a string or number; heroes need a scalar primary key.`,
    );
  }

  /**
   * Loads the hero, or null when its row is gone; a hero this unit of work read ahead
   * (`readAhead`) is not read again. Unknown `hero_type` throws.
   */
  async load(uow: UnitOfWork, heroType: string, heroId: string): Promise<object | null> {
    const key = preloadKey(heroType, heroId);
    if (!uow.preloadedHeroes.has(key)) {
      const read = this.readAhead(uow, heroType, heroId);
      if (read) await read.keep((await uow.batch!.readTogether([read.statement]))[0]);
    }
    if (uow.preloadedHeroes.has(key)) {
      const hero = uow.preloadedHeroes.get(key)!;
      uow.preloadedHeroes.delete(key);
      return hero;
    }
    const metadata = this.metadataNamed(heroType);
    const primary = metadata.primaryColumns[0];
    return uow.manager
      .createQueryBuilder(metadata.target, 'hero')
      .where(`hero.${primary.propertyPath} = :heroId`, { heroId })
      .getOne();
  }

  /**
   * The hero's read as a statement to send together with others in one message (PostgreSQL's
   * batched transactions), and `keep`, which hydrates its result as TypeORM's `getOne()` would
   * (after-load listeners and subscribers included) for the next `load` in this unit of work.
   * Null where TypeORM must load the hero itself: no batch, an unknown `hero_type`, or an entity
   * `getOne()` does more for (relation ids or counts, inheritance, embeddeds, virtual columns) or
   * whose primary key has a transformer, and an id the key column would refuse: the read travels
   * with the finalize's row locks, and must not fail the transaction of a step that already ran
   * (TypeORM's load then fails in the next step's prepare, where the exception policy handles it).
   */
  readAhead(
    uow: UnitOfWork,
    heroType: string,
    heroId: string,
  ): { statement: LiteralStatement; keep(result: PgResult): Promise<void> } | null {
    const dataSource = this.database.dataSource;
    if (!uow.batch || !dataSource.hasMetadata(heroType)) return null;
    const metadata = dataSource.getMetadata(heroType);
    if (!isPlainEntity(metadata) || !keyFitsColumn(metadata.primaryColumns[0], heroId)) return null;
    const literals = uow.batch.sqlLiterals;
    const primary = metadata.primaryColumns[0];
    const columns = metadata.columns.filter((column) => column.isSelect && !column.isVirtual);
    const notDeleted = metadata.deleteDateColumn
      ? ` AND ${literals.identifier(metadata.deleteDateColumn.databaseName)} IS NULL`
      : '';
    const statement: LiteralStatement = {
      template:
        `SELECT ${columns.map((column) => literals.identifier(column.databaseName)).join(', ')} ` +
        `FROM ${literals.table(metadata)} WHERE ${literals.identifier(primary.databaseName)} = $1${notDeleted}`,
      values: [literals.property(metadata, primary.propertyName, heroId)],
    };
    const keep = async (result: PgResult) => {
      const row = result.rows[0];
      let hero: object | null = null;
      if (row) {
        const queryRunner = uow.manager.queryRunner!;
        hero = hydrateRow(dataSource, metadata, row, columns, queryRunner);
        await queryRunner.broadcaster.broadcast('Load', metadata, [hero]);
      }
      uow.preloadedHeroes.set(preloadKey(heroType, heroId), hero);
    };
    return { statement, keep };
  }

  private metadataNamed(heroType: string): EntityMetadata {
    const dataSource = this.database.dataSource;
    if (!dataSource.hasMetadata(heroType)) {
      throw new StepConfigurationError(
        `hero_type '${heroType}' names no entity registered in the data source. Register the entity, or cancel the workflows of that hero type.`,
      );
    }
    return dataSource.getMetadata(heroType);
  }

  private metadataOf(hero: object, definition?: WorkflowDefinition): EntityMetadata {
    const dataSource = this.database.dataSource;
    const target: EntityTarget<ObjectLiteral> | undefined =
      definition?.hero?.() ?? hero.constructor;
    if (target && target !== Object && dataSource.hasMetadata(target)) {
      return dataSource.getMetadata(target);
    }
    throw new InvalidArgumentError(
      "Cannot tell the hero's entity: pass an instance of a TypeORM entity class registered in the data source, or declare @Workflow({ hero: () => Entity }).",
    );
  }
}

function preloadKey(heroType: string, heroId: string): string {
  return `${heroType}\u0000${heroId}`;
}

/** An entity `getOne()` only selects and hydrates: one table, its own plain columns. */
function isPlainEntity(metadata: EntityMetadata): boolean {
  return (
    metadata.tableType === 'regular' &&
    metadata.primaryColumns.length === 1 &&
    // TypeORM's own load binds the stored id as is; a transformed key would be looked up differently.
    !metadata.primaryColumns[0].transformer &&
    metadata.relationIds.length === 0 &&
    metadata.relationCounts.length === 0 &&
    metadata.embeddeds.length === 0 &&
    metadata.childEntityMetadatas.length === 0 &&
    !metadata.discriminatorColumn &&
    !metadata.columns.some((column) => column.isVirtualProperty)
  );
}

/** Integer key types and the largest magnitude each holds. */
const INTEGER_KEY_LIMITS = new Map<unknown, bigint>([
  ['smallint', 32_767n],
  ['int2', 32_767n],
  [Number, 2_147_483_647n],
  ['int', 2_147_483_647n],
  ['int4', 2_147_483_647n],
  ['integer', 2_147_483_647n],
  ['bigint', 9_223_372_036_854_775_807n],
  ['int8', 9_223_372_036_854_775_807n],
]);
const TEXT_KEY_TYPES = new Set<unknown>([String, 'varchar', 'character varying', 'text', 'char']);

/** Whether PostgreSQL takes `heroId` as a value of the key column (text, uuid or integer keys). */
function keyFitsColumn(primary: ColumnMetadata, heroId: string): boolean {
  if (TEXT_KEY_TYPES.has(primary.type)) return true;
  if (primary.type === 'uuid') return isUuid(heroId);
  const limit = INTEGER_KEY_LIMITS.get(primary.type);
  if (limit === undefined || !/^-?\d{1,19}$/.test(heroId)) return false;
  const value = BigInt(heroId);
  return value <= limit && value >= -limit - 1n;
}
