import type { ObjectLiteral, Repository } from 'typeorm';

/**
 * The partial row TypeORM's `insert()`/`update()`/`values()` take for an entity (its
 * `QueryDeepPartialEntity`), named through `Repository`'s public signature: TypeORM 0.3.20 does not
 * export that type from its entry point.
 */
export type PartialRow<Entity extends ObjectLiteral> = Exclude<
  Parameters<Repository<Entity>['insert']>[0],
  unknown[]
>;
