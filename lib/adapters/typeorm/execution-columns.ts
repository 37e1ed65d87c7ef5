import { Injectable } from '@nestjs/common';
import type { FindOptionsSelect, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import { isColumnPresent } from '../optional-columns';
import { GenevaDriveDataSource } from './geneva-drive-data-source';

/**
 * The step-execution columns that exist now: code may be deployed before the resumable-steps or
 * signals migration, and TypeORM would otherwise name their columns in every read and insert.
 * Each read of executions lists its columns and each write leaves absent ones out, so nothing
 * changes TypeORM's own metadata.
 */
@Injectable()
export class ExecutionColumns {
  constructor(private readonly database: GenevaDriveDataSource) {}

  /** The entity properties whose columns exist. */
  properties(): string[] {
    const { features } = this.database;
    return this.database.dataSource
      .getMetadata(StepExecutionEntity)
      .columns.filter((column) => isColumnPresent(features, column.databaseName))
      .map((column) => column.propertyName);
  }

  /** `find()`'s `select` for the columns that exist. */
  findSelect(): FindOptionsSelect<StepExecutionEntity> {
    return Object.fromEntries(this.properties().map((property) => [property, true]));
  }

  /** Selects the columns that exist on `query`, whose executions are aliased `alias`. */
  selectOn<T extends ObjectLiteral>(
    query: SelectQueryBuilder<T>,
    alias: string,
  ): SelectQueryBuilder<T> {
    return query.select(this.properties().map((property) => `${alias}.${property}`));
  }

  /** `values` without the properties whose columns do not exist. */
  writable<T extends object>(values: T): Partial<T> {
    const present = new Set(this.properties());
    return Object.fromEntries(
      Object.entries(values).filter(([property]) => present.has(property)),
    ) as Partial<T>;
  }
}
