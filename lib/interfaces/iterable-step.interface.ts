import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import type { Duration } from './states.interface';

export interface IterateOverRecordsOptions {
  /** default 'id' */
  cursorColumn?: string;
}

/** The cursor-checkpointed iteration handle a `@ResumableStep` method receives. */
export interface IterableStep<C = unknown> {
  /** null on the first run */
  readonly cursor: C | null;
  /** checkpoints made during this execution */
  readonly iterations: number;
  /** true on a successor execution */
  readonly resumed: boolean;
  set(value: C): Promise<void>;
  /** integer cursors only */
  advance(): Promise<void>;
  checkpoint(): Promise<void>;
  /** always interrupts */
  skipTo(value: C, options?: { wait?: Duration }): Promise<never>;
  iterateOver<T>(items: Iterable<T>, fn: (item: T) => unknown): Promise<void>;
  iterateOverRecords<E extends ObjectLiteral>(
    queryBuilder: SelectQueryBuilder<E>,
    fn: (record: E) => unknown,
    options?: IterateOverRecordsOptions,
  ): Promise<void>;
  iterateOverBatches<E extends ObjectLiteral>(
    queryBuilder: SelectQueryBuilder<E>,
    options: { batchSize: number; cursorColumn?: string },
    fn: (batch: E[]) => unknown,
  ): Promise<void>;
}
