import { Injectable } from '@nestjs/common';
import type { EntityManager, EntityMetadata } from 'typeorm';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { StepConfigurationError } from '../errors/step-configuration.error';
import { GenevaDriveDataSource } from '../persistence/geneva-drive-data-source';

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
    if (id === undefined || id === null || id === '') {
      throw new InvalidArgumentError(
        `The hero ${metadata.name} has no primary key value yet; save it before starting a workflow for it.`,
      );
    }
    return { heroType: metadata.name, heroId: String(id) };
  }

  /** Loads the hero, or null when its row is gone. Unknown `hero_type` throws. */
  async load(manager: EntityManager, heroType: string, heroId: string): Promise<object | null> {
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
      .where(`hero.${primary.propertyPath} = :heroId`, { heroId })
      .getOne() as Promise<object | null>;
  }

  private metadataOf(hero: object, definition?: WorkflowDefinition): EntityMetadata {
    const dataSource = this.database.dataSource;
    const target = definition?.hero?.() ?? (hero as { constructor?: unknown }).constructor;
    if (target && target !== Object && dataSource.hasMetadata(target as Function)) {
      return dataSource.getMetadata(target as Function);
    }
    throw new InvalidArgumentError(
      'Cannot tell the hero\'s entity: pass an instance of a TypeORM entity class registered in the data source, or declare @Workflow({ hero: () => Entity }).',
    );
  }
}
