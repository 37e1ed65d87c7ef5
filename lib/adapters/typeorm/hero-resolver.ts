import { Injectable } from '@nestjs/common';
import type { EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import type { WorkflowDefinition } from '../../discovery/workflow-definition.interface';
import { InvalidArgumentError } from '../../errors/invalid-argument.error';
import { StepConfigurationError } from '../../errors/step-configuration.error';
import { GenevaDriveDataSource } from './geneva-drive-data-source';
import { HeroRowReader } from './hero-row-reader';
import type { HeroIdentity } from '../../ports/workflow.repository';
import type { UnitOfWork } from './unit-of-work';

/**
 * Maps heroes to `(hero_type, hero_id)` and back: `hero_type` is the TypeORM entity metadata name,
 * `hero_id` the single primary column as a string.
 */
@Injectable()
export class HeroResolver {
  /** Per hero type: its reader, or null when only `getOne()` loads it faithfully. */
  private readonly readers = new Map<string, HeroRowReader | null>();

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
   * Loads the hero through TypeORM (`getOne()`, so listeners, subscribers, relations and soft
   * deletes behave as anywhere in the app), in the unit of work's transaction; null when its row
   * is gone. Unknown `hero_type` throws.
   */
  async load(uow: UnitOfWork, heroType: string, heroId: string): Promise<object | null> {
    const readAhead = uow.takeHeroReadAhead(heroType, heroId);
    if (readAhead) return readAhead.hero;
    const metadata = this.metadataNamed(heroType);
    const primary = metadata.primaryColumns[0];
    const manager = await uow.managerForOtherTables();
    return manager
      .createQueryBuilder(metadata.target, 'hero')
      .where(`hero.${primary.propertyPath} = :heroId`, { heroId })
      .getOne();
  }

  /**
   * The hero's own statement, to send beside the row locks, and how to build its entity; null
   * when the type is unknown or its entity needs `getOne()` (see HeroRowReader).
   */
  readerFor(heroType: string): HeroRowReader | null {
    let reader = this.readers.get(heroType);
    if (reader === undefined) {
      const dataSource = this.database.dataSource;
      reader = dataSource.hasMetadata(heroType)
        ? HeroRowReader.of(dataSource, dataSource.getMetadata(heroType))
        : null;
      this.readers.set(heroType, reader);
    }
    return reader?.available() ? reader : null;
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
