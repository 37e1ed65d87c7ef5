import type { DataSource, EntityMetadata } from 'typeorm';
import { describeValue, storedStringProblem } from '../../common/input-guards';
import { isUuid } from '../../common/uuid';
import type { WorkflowDefinition } from '../../discovery/workflow-definition.interface';
import { InvalidArgumentError } from '../../errors/invalid-argument.error';
import type { HeroResolver } from './hero-resolver';
import type { HeroIdentity } from '../../ports/workflow.repository';

const INTEGER_COLUMN_TYPES = new Set<unknown>([
  Number,
  'int',
  'int2',
  'int4',
  'int8',
  'integer',
  'smallint',
  'mediumint',
  'tinyint',
  'bigint',
]);

/**
 * The `(hero_type, hero_id)` of a hero given to `start()`, `findOngoing()` or `list()`, checked
 * so that nothing unusable reaches the database: the hero must be an object; an entity of another
 * class than the workflow's declared `hero` is refused (its id would be stored under the declared
 * type); the id must be storable verbatim (no NUL, no lone surrogate, at most 255 characters),
 * a finite and exact number (no integer over Number.MAX_SAFE_INTEGER, which may already name
 * another row), and of the primary column's kind (digits for an integer key, a UUID for a `uuid`
 * key), because a later load of the hero compares it with that column.
 */
export function identifyHero(
  dataSource: DataSource,
  heroes: HeroResolver,
  hero: unknown,
  definition: WorkflowDefinition | undefined,
  method: string,
): HeroIdentity {
  if (hero === null || typeof hero !== 'object' || Array.isArray(hero)) {
    throw new InvalidArgumentError(
      `${method} hero must be an entity instance (a saved row of a TypeORM entity), but was ${describeValue(hero)}.`,
    );
  }
  const declared = definition?.hero?.();
  const ownClass: unknown = hero.constructor;
  if (
    declared !== undefined &&
    typeof ownClass === 'function' &&
    ownClass !== Object &&
    !(typeof declared === 'function' && hero instanceof declared) &&
    dataSource.hasMetadata(ownClass) &&
    dataSource.getMetadata(ownClass).target !== metadataOrNull(dataSource, declared)?.target
  ) {
    throw new InvalidArgumentError(
      `${method} got a ${dataSource.getMetadata(ownClass).name} as hero, but ${definition!.name} declares ` +
        `hero: () => ${metadataOrNull(dataSource, declared)?.name ?? describeValue(declared)}. Pass a hero of that entity.`,
    );
  }
  const identity = heroes.identify(hero, definition);
  const metadata = dataSource.getMetadata(identity.heroType);
  const primary = metadata.primaryColumns[0];
  const raw: unknown = primary.getEntityValue(hero);
  const label = `${method} hero ${identity.heroType} has a primary key (${primary.propertyName}) that`;
  if (typeof raw === 'number' && !Number.isFinite(raw)) {
    throw new InvalidArgumentError(
      `${label} is ${String(raw)}; save the hero first, or pass the saved row.`,
    );
  }
  if (typeof raw === 'number' && Number.isInteger(raw) && !Number.isSafeInteger(raw)) {
    throw new InvalidArgumentError(
      `${label} is ${String(raw)}, an integer beyond Number.MAX_SAFE_INTEGER, so it is no longer exact and may name another row; ` +
        'read bigint keys as strings (TypeORM bigint columns do by default) or as BigInt.',
    );
  }
  const problem = storedStringProblem(identity.heroId, { allowBlank: true });
  if (problem) throw new InvalidArgumentError(`${label} ${problem}.`);
  if (INTEGER_COLUMN_TYPES.has(primary.type) && !/^-?\d+$/.test(identity.heroId)) {
    throw new InvalidArgumentError(
      `${label} must be an integer (the column is ${String(primaryTypeName(primary.type))}), but was ${describeValue(raw)}.`,
    );
  }
  if (primary.type === 'uuid' && !isUuid(identity.heroId)) {
    throw new InvalidArgumentError(
      `${label} must be a UUID (the column is uuid), but was ${describeValue(raw)}.`,
    );
  }
  return identity;
}

function metadataOrNull(dataSource: DataSource, target: unknown): EntityMetadata | null {
  return target !== undefined && dataSource.hasMetadata(target as never)
    ? dataSource.getMetadata(target as never)
    : null;
}

function primaryTypeName(type: unknown): string {
  return typeof type === 'function' ? type.name.toLowerCase() : String(type);
}
