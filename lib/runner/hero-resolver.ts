import { Injectable } from '@nestjs/common';
import type { EntityManager, EntityMetadata, EntityTarget, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { StepConfigurationError } from '../errors/step-configuration.error';
import { GenevaDriveDataSource } from '../persistence/geneva-drive-data-source';
import type { PrefetchedRead } from '../persistence/postgres-query-batch';

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

  /** Loads the hero, or null when its row is gone. Unknown `hero_type` throws. */
  async load(manager: EntityManager, heroType: string, heroId: string): Promise<object | null> {
    return this.query(manager, heroType, heroId).getOne();
  }

  /**
   * The SQL and parameters `load` sends for this hero, so a caller can read it ahead together
   * with other statements (see PostgresQueryBatch); null when `hero_type` names no entity.
   */
  loadQuery(manager: EntityManager, heroType: string, heroId: string): PrefetchedRead | null {
    if (!this.database.dataSource.hasMetadata(heroType)) return null;
    const [sql, parameters] = this.query(manager, heroType, heroId).getQueryAndParameters();
    return { sql, parameters };
  }

  private query(manager: EntityManager, heroType: string, heroId: string): SelectQueryBuilder<ObjectLiteral> {
    const dataSource = this.database.dataSource;
    if (!dataSource.hasMetadata(heroType)) {
      throw new StepConfigurationError(
        `hero_type '${heroType}' names no entity registered in the data source. Register the entity, or cancel the workflows of that hero type.`,
      );
    }
    const metadata = dataSource.getMetadata(heroType);
    const primary = metadata.primaryColumns[0];
    return manager
      .createQueryBuilder(metadata.target, 'hero')
      .where(`hero.${primary.propertyPath} = :heroId`, { heroId });
  }

  private metadataOf(hero: object, definition?: WorkflowDefinition): EntityMetadata {
    const dataSource = this.database.dataSource;
    const target: EntityTarget<ObjectLiteral> | undefined = definition?.hero?.() ?? hero.constructor;
    if (target && target !== Object && dataSource.hasMetadata(target)) {
      return dataSource.getMetadata(target);
    }
    throw new InvalidArgumentError(
      'Cannot tell the hero\'s entity: pass an instance of a TypeORM entity class registered in the data source, or declare @Workflow({ hero: () => Entity }).',
    );
  }
}
