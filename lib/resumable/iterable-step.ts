import type { ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { parseDurationOrNull, waitProblem } from '../common/duration';
import { describeValue, jsonDataProblem } from '../common/input-guards';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import type {
  IterableStep,
  IterateOverRecordsOptions,
} from '../interfaces/iterable-step.interface';
import type { Duration } from '../interfaces/states.interface';
import type { InterruptionPolicy } from './interruption-policy';
import { StepInterruption } from './step-interruption';

const RECORDS_PAGE_SIZE = 100;

/** Persists the cursor of the running execution (one UPDATE, size-checked). */
export type CursorWriter = (cursor: unknown) => Promise<void>;

/** The `IterableStep` a `@ResumableStep` method receives. */
export class IterableStepImpl<C = unknown> implements IterableStep<C> {
  private current: C | null;
  private checkpoints = 0;
  private interruption: StepInterruption | null = null;

  constructor(
    cursor: C | null,
    readonly resumed: boolean,
    private readonly writeCursor: CursorWriter,
    private readonly interrupter: InterruptionPolicy,
  ) {
    this.current = cursor;
  }

  get cursor(): C | null {
    return this.current;
  }

  get iterations(): number {
    return this.checkpoints;
  }

  /** The interruption this step was stopped with, if any (honored even when swallowed). */
  get interrupted(): StepInterruption | null {
    return this.interruption;
  }

  async set(value: C): Promise<void> {
    assertCursor(value, 'set()');
    this.current = value;
    await this.checkpoint();
  }

  async advance(): Promise<void> {
    const value = this.current ?? 0;
    if (!Number.isInteger(value)) {
      throw new InvalidArgumentError(
        `advance() needs an integer cursor, but the cursor is ${JSON.stringify(value)}; use set() instead.`,
      );
    }
    if (!Number.isSafeInteger((value as number) + 1)) {
      throw new InvalidArgumentError(
        `advance() cannot count past ${String(value)}: the next integer is not exact in JavaScript (over Number.MAX_SAFE_INTEGER); use set() with a string cursor instead.`,
      );
    }
    await this.set(((value as number) + 1) as C);
  }

  async checkpoint(): Promise<void> {
    this.checkpoints += 1;
    await this.writeCursor(this.current);
    const reason = await this.interrupter.shouldInterrupt(this.checkpoints);
    if (reason) this.stop(new StepInterruption(reason, null));
  }

  async skipTo(value: C, options: { wait?: Duration } = {}): Promise<never> {
    if (options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw new InvalidArgumentError(
        `skipTo() takes options { wait? }, but got ${describeValue(options)}.`,
      );
    }
    const unknown = Object.keys(options).filter((key) => key !== 'wait');
    if (unknown.length > 0) {
      throw new InvalidArgumentError(
        `skipTo() got unknown option(s) ${unknown.join(', ')}. Allowed: wait.`,
      );
    }
    const problem = options.wait === undefined ? null : waitProblem(options.wait);
    if (problem) throw new InvalidArgumentError(`skipTo({ wait }) ${problem}.`);
    const waitMs = options.wait === undefined ? null : parseDurationOrNull(options.wait);
    assertCursor(value, 'skipTo()');
    this.current = value;
    await this.writeCursor(value);
    return this.stop(new StepInterruption('skipTo', waitMs));
  }

  async iterateOver<T>(items: Iterable<T>, fn: (item: T) => unknown): Promise<void> {
    if (items === null || typeof (items as Partial<Iterable<T>>)[Symbol.iterator] !== 'function') {
      throw new InvalidArgumentError(
        'iterateOver() needs an iterable (an array, a Set, a generator...).',
      );
    }
    const start: unknown = this.current ?? 0;
    if (typeof start !== 'number' || !Number.isSafeInteger(start) || start < 0) {
      throw new InvalidArgumentError(
        `iterateOver() keeps the index of the next item as cursor, but the cursor is ${describeValue(start)}. ` +
          'A step that used another cursor shape before needs a new step name, or reattempt({ rewind: true }).',
      );
    }
    let index = 0;
    for (const item of items) {
      if (index >= start) {
        await fn(item);
        await this.set((index + 1) as C);
      }
      index += 1;
    }
  }

  async iterateOverRecords<E extends ObjectLiteral>(
    queryBuilder: SelectQueryBuilder<E>,
    fn: (record: E) => unknown,
    options: IterateOverRecordsOptions = {},
  ): Promise<void> {
    if (options === null || typeof options !== 'object') {
      throw new InvalidArgumentError(
        `iterateOverRecords() takes options { cursorColumn? }, but got ${describeValue(options)}.`,
      );
    }
    const column = cursorColumnOf(queryBuilder, options.cursorColumn, 'iterateOverRecords()');
    for (;;) {
      const page = await this.page(queryBuilder, column, RECORDS_PAGE_SIZE);
      for (const record of page) {
        await fn(record);
        await this.set(record[column] as C);
      }
      if (page.length < RECORDS_PAGE_SIZE) return;
    }
  }

  async iterateOverBatches<E extends ObjectLiteral>(
    queryBuilder: SelectQueryBuilder<E>,
    options: { batchSize: number; cursorColumn?: string },
    fn: (batch: E[]) => unknown,
  ): Promise<void> {
    if (options === null || typeof options !== 'object') {
      throw new InvalidArgumentError(
        `iterateOverBatches() takes options { batchSize, cursorColumn? }, but got ${describeValue(options)}.`,
      );
    }
    const { batchSize } = options;
    if (!Number.isInteger(batchSize) || batchSize <= 0) {
      throw new InvalidArgumentError(
        `iterateOverBatches() needs a positive integer batchSize, got ${String(batchSize)}.`,
      );
    }
    const column = cursorColumnOf(queryBuilder, options.cursorColumn, 'iterateOverBatches()');
    for (;;) {
      const batch = await this.page(queryBuilder, column, batchSize);
      if (batch.length === 0) return;
      await fn(batch);
      await this.set(batch[batch.length - 1][column] as C);
      if (batch.length < batchSize) return;
    }
  }

  /** Keyset pagination: `column > cursor ORDER BY column LIMIT size` (never OFFSET). */
  private page<E extends ObjectLiteral>(
    queryBuilder: SelectQueryBuilder<E>,
    column: string,
    size: number,
  ): Promise<E[]> {
    const query = queryBuilder.clone();
    const path = `${query.alias}.${column}`;
    if (this.current !== null)
      query.andWhere(`${path} > :genevaDriveCursor`, { genevaDriveCursor: this.current });
    return query.orderBy(path, 'ASC').limit(size).getMany();
  }

  private stop(interruption: StepInterruption): never {
    this.interruption ??= interruption;
    throw interruption;
  }
}

/**
 * A cursor must round-trip through the JSON cursor column: JSON data plus Dates within years
 * 1–9999 (stored tagged as `{ "$date": iso }`, so an object of that one key is refused). `null`
 * starts over.
 */
function assertCursor(value: unknown, method: string): void {
  const problem = jsonDataProblem(value, 'cursor', { reserveDateTag: true });
  if (problem)
    throw new InvalidArgumentError(
      `${method} ${problem}. Cursors are stored as JSON: keep them small and plain (an id or an offset).`,
    );
}

/**
 * The cursor column of a keyset walk must be a column property of the query's root entity: it
 * is written into the SQL, so anything else is refused rather than interpolated.
 */
function cursorColumnOf<E extends ObjectLiteral>(
  queryBuilder: SelectQueryBuilder<E>,
  cursorColumn: unknown,
  method: string,
): string {
  const column = cursorColumn ?? 'id';
  const metadata = queryBuilder.expressionMap.mainAlias?.hasMetadata
    ? queryBuilder.expressionMap.mainAlias.metadata
    : null;
  if (typeof column !== 'string' || (metadata && !metadata.findColumnWithPropertyPath(column))) {
    const known = metadata
      ? `; ${metadata.name} has ${metadata.columns.map((c) => c.propertyPath).join(', ')}`
      : '';
    throw new InvalidArgumentError(
      `${method} cursorColumn must name a column property of the query's entity, but was ${describeValue(column)}${known}.`,
    );
  }
  if (!metadata && !/^[A-Za-z_][\w.]*$/.test(column)) {
    throw new InvalidArgumentError(
      `${method} cursorColumn must be a property name, but was ${describeValue(column)}.`,
    );
  }
  return column;
}
