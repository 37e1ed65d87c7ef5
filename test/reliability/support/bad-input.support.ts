import type { Queue } from 'bullmq';
import { Entity, PrimaryColumn, type DataSource } from 'typeorm';
import {
  RemovedStep,
  ResumableStep,
  SignalEntity,
  Step,
  StepExecutionEntity,
  Workflow,
  WorkflowEntity,
  type IterableStep,
  type StepContext,
} from '../../../lib';
import { Order } from '../../fixtures/order.entity';

// ───────────────────────────── Fixtures ─────────────────────────────

/** A hero keyed by a UUID column. */
@Entity('test_vouchers')
export class Voucher {
  @PrimaryColumn({ type: 'uuid' })
  id!: string;
}

/** A hero keyed by a free-form string column. */
@Entity('test_coupons')
export class Coupon {
  @PrimaryColumn({ type: 'varchar' })
  code!: string;
}

/** First step due in an hour: a started workflow stays `ready` with one delayed job. */
@Workflow({ hero: () => Order })
export class IdleOrderWorkflow {
  @Step({ wait: '1h' }) later() {}
  @Step() after() {}
  @RemovedStep() legacy?: never;
}

/** Parks on `go` at once: the seed for a `waiting` execution. */
@Workflow({ hero: () => Order })
export class ParkedOrderWorkflow {
  @Step({ waitFor: 'go' }) wait() {}
}

/** No steps: finished as soon as it starts. */
@Workflow({ name: 'nothing-to-do' })
export class NothingToDoWorkflow {}

/** Heroes of any entity (no declared hero), for the "cannot tell the entity" cases. */
@Workflow()
export class AnyHeroWorkflow {
  @Step({ wait: '1h' }) later() {}
}

@Workflow({ hero: () => Voucher })
export class VoucherWorkflow {
  @Step({ wait: '1h' }) later() {}
}

@Workflow({ hero: () => Coupon })
export class CouponWorkflow {
  @Step({ wait: '1h' }) later() {}
}

/** What a resumable step does with its cursor, set per test. */
export const cursorScript: { run: (iter: IterableStep<unknown>) => Promise<unknown> } = {
  run: () => Promise.resolve(),
};

/** A resumable step scripted through `cursorScript`, with the default policy (pause). */
@Workflow({ hero: () => Order })
export class CursorWorkflow {
  @ResumableStep()
  walk(iter: IterableStep<unknown>, _ctx: StepContext<Order>) {
    return cursorScript.run(iter);
  }
  @Step() done() {}
}

// ───────────────────────────── Values ─────────────────────────────

/** A value that refers to itself. */
export function circular(): Record<string, unknown> {
  const value: Record<string, unknown> = { name: 'loop' };
  value.self = value;
  return value;
}

/** `[[[…]]]` nested `depth` levels deep. */
export function deeplyNested(depth: number): unknown {
  let value: unknown = [];
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** Ids that are not a workflow's, by shape: each must give WorkflowNotFoundError. */
export const MALFORMED_IDS: Array<[label: string, id: string]> = [
  ['not a uuid', 'not-a-uuid'],
  ['empty string', ''],
  ['SQL-looking', "'; DROP TABLE geneva_drive_workflows; --"],
  ['lone surrogate', '\uD800'],
  ['NUL byte', '\u0000'],
  ['a uuid followed by a NUL byte', '0190a000-0000-7000-8000-000000000000\u0000'],
  ['a uuid followed by a newline', '0190a000-0000-7000-8000-000000000000\n'],
  ['a uuid in braces', '{0190a000-0000-7000-8000-000000000000}'],
  ['1 MB string', 'x'.repeat(1_000_000)],
  ['unknown uuid (nil)', '00000000-0000-0000-0000-000000000000'],
  ['unknown uuidv7', '0190a000-0000-7000-8000-000000000000'],
];

/** Values that are neither a WorkflowEntity nor an id string: InvalidArgumentError. */
export const NOT_WORKFLOW_LIKE: Array<[label: string, value: unknown]> = [
  ['undefined', undefined],
  ['null', null],
  ['a number', 42],
  ['a boolean', true],
  ['a BigInt', 10n],
  ['a symbol', Symbol('workflow')],
  ['a function', () => 'id'],
  ['an array', ['0190a000-0000-7000-8000-000000000000']],
  ['an object without id', {}],
  ['an entity-like object with a numeric id', { id: 42 }],
];

// ───────────────────────────── Write snapshot ─────────────────────────────

/** Row counts and the newest `updated_at` of the three tables, plus every BullMQ job id. */
export interface WriteSnapshot {
  tables: Record<string, { rows: number; newestUpdate: string | null }>;
  jobs: string[];
}

// BullMQ 6 keeps the jobs of a paused queue in 'waiting' (its 'paused' list is gone); no test pauses
// a queue.
const JOB_STATES = [
  'active',
  'completed',
  'delayed',
  'failed',
  'prioritized',
  'waiting',
  'waiting-children',
] as const;

/**
 * What a call could have written: every library write sets `updated_at`, so unchanged counts and
 * newest `updated_at` per table mean no insert, update or delete; unchanged job ids mean no job.
 */
export async function writeSnapshot(
  dataSource: DataSource,
  queues: Queue[],
): Promise<WriteSnapshot> {
  const tables: WriteSnapshot['tables'] = {};
  for (const entity of [WorkflowEntity, StepExecutionEntity, SignalEntity]) {
    const metadata = dataSource.getMetadata(entity);
    const row = await dataSource
      .createQueryBuilder(entity, 't')
      .select('COUNT(*)', 'rows')
      .addSelect('MAX(t.updatedAt)', 'newest')
      .getRawOne<{ rows: string | number; newest: Date | string | null }>();
    tables[metadata.tableName] = {
      rows: Number(row?.rows ?? 0),
      newestUpdate: row?.newest == null ? null : new Date(row.newest).toISOString(),
    };
  }
  const jobs: string[] = [];
  for (const queue of queues) {
    for (const job of await queue.getJobs([...JOB_STATES])) jobs.push(`${queue.name}/${job.id}`);
  }
  return { tables, jobs: jobs.sort() };
}

// ───────────────────────────── Case runner ─────────────────────────────

/** An error class, as `toBeInstanceOf` takes it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ErrorClass = abstract new (...args: any[]) => Error;

/** One row of a bad-input table: the call, the error class it must reject with, and the message. */
export interface BadCall {
  name: string;
  call: () => unknown;
  error: ErrorClass;
  message: RegExp;
}

/** What each file prints at the end: one line per case checked. */
export class CheckLog {
  private readonly lines: string[] = [];

  constructor(private readonly title: string) {}

  record(group: string, name: string, outcome: string): void {
    this.lines.push(
      `${group} | ${name} → ${outcome.length > 160 ? `${outcome.slice(0, 160)}…` : outcome}`,
    );
  }

  print(): void {
    console.log(`${this.title}: ${this.lines.length} case(s) checked\n${this.lines.join('\n')}`);
  }
}

/**
 * Calls `call()` and returns what it rejected with. A promise-returning entry point must reject,
 * never throw synchronously (a synchronous throw escapes `.catch()` chains), so a synchronous
 * throw fails the case; a resolution fails it too.
 */
export async function rejectionOf(call: () => unknown): Promise<Error> {
  let result: unknown;
  try {
    result = call();
  } catch (error) {
    throw new Error(`threw synchronously instead of rejecting: ${String(error)}`);
  }
  if (!(result instanceof Promise))
    throw new Error(`returned ${String(result)} instead of a promise`);
  return result.then(
    (value) => {
      throw new Error(`resolved (${JSON.stringify(value)?.slice(0, 100)}) instead of rejecting`);
    },
    (error: unknown) => error as Error,
  );
}
