import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { describeValue } from '../common/input-guards';
import {
  LOCK_CONFLICT_RETRY_DELAYS_MS,
  retryLockConflicts,
} from '../common/transient-database-error';
import { isUuid } from '../common/uuid';
import { validateStepJobOptions } from '../common/step-job-options.validator';
import { workflowIdOf, workflowNotFound } from '../common/workflow-like';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import type { SignalEntity } from '../entities/signal.entity';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import { GenevaDriveError } from '../errors/geneva-drive.error';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { StepConfigurationError } from '../errors/step-configuration.error';
import { WorkflowAlreadyOngoingError } from '../errors/workflow-already-ongoing.error';
import type { StepJobOptions } from '../interfaces/job-options.interface';
import type {
  ListFilter,
  SignalOptions,
  StartOptions,
  WorkflowLike,
  WorkflowRef,
} from '../interfaces/workflow-service.interface';
import { inlineEnqueueStorage } from '../queue/inline-enqueue.context';
import { WorkflowScheduler } from '../scheduling/workflow-scheduler';
import { SignalSender } from '../signals/signal-sender';
import {
  WorkflowRepository,
  type HeroIdentity,
  type NewBulkWorkflow,
  type NewWorkflow,
  type RepositoryTransaction,
} from '../ports/workflow.repository';
import { ClsContextBridge } from '../tracing/cls-context.bridge';
import { WorkflowTracer } from '../tracing/workflow-tracer';
import { OperatorVerbs } from './operator-verbs';
import { MissingMigrationError } from '../errors/missing-migration.error';
import {
  checkContextSize,
  rejectUnknownKeys,
  startContext,
  startMetadata,
  validateListFilter,
} from './service-arguments';

const START_OPTION_KEYS = [
  'hero',
  'allowMultiple',
  'metadata',
  'stepJobOptions',
  'manager',
  'context',
];
/** A `startMany()` entry: `start()`'s options less `manager` (the call's `options.manager` is the one). */
const START_MANY_ENTRY_KEYS = START_OPTION_KEYS.filter((key) => key !== 'manager');
const START_MANY_OPTION_KEYS = ['manager', 'onConflict'];
/** Entries per `startMany()` call (SPEC §16.7). */
const MAX_START_MANY = 10_000;
/** Heroes named in a conflict message before it says how many more. */
const NAMED_HEROES = 20;
const LIST_FILTER_KEYS = ['workflow', 'state', 'hero', 'ongoing', 'limit', 'offset'];
function conflictMessage(
  type: string,
  ongoing: ReadonlyMap<string, HeroIdentity>,
  duplicates: ReadonlyMap<string, HeroIdentity>,
): string {
  const list = (heroes: ReadonlyMap<string, HeroIdentity>) => {
    const all = [...heroes.values()].map((hero) => `${hero.heroType} ${hero.heroId}`);
    const named = all.slice(0, NAMED_HEROES).join(', ');
    return all.length > NAMED_HEROES ? `${named} and ${all.length - NAMED_HEROES} more` : named;
  };
  const parts: string[] = [];
  if (ongoing.size > 0) parts.push(`an ongoing ${type} already exists for ${list(ongoing)}`);
  if (duplicates.size > 0) parts.push(`more than one entry is for ${list(duplicates)}`);
  return (
    `startMany() started nothing: ${parts.join('; ')}. ` +
    "Pass onConflict: 'skip' to leave those entries out, or allowMultiple: true."
  );
}

/** Starts, inspects and steers workflows (the verbs: OperatorVerbs). Inject it anywhere. */
@Injectable()
export class WorkflowService {
  private readonly logger = new Logger('GenevaDrive');

  constructor(
    private readonly repository: WorkflowRepository,
    private readonly registry: WorkflowRegistry,
    private readonly scheduler: WorkflowScheduler,
    private readonly signalSender: SignalSender,
    private readonly operator: OperatorVerbs,
    private readonly tracer: WorkflowTracer,
    private readonly cls: ClsContextBridge,
  ) {}

  /**
   * Creates the workflow and its first step execution, and enqueues it after commit (after the
   * caller's commit with `manager`). A second ongoing workflow of the same type for the same hero
   * rejects with `WorkflowAlreadyOngoingError`.
   */
  async start(workflow: WorkflowRef, opts: StartOptions = {}): Promise<WorkflowEntity> {
    const definition = this.resolveRef(workflow, 'start()');
    const validated = this.validatedStart(opts, definition, START_OPTION_KEYS, 'start()');
    return this.tracer.inCallSpan(
      'geneva_drive.start',
      { 'geneva_drive.workflow.class': definition.name },
      (traceParent) =>
        this.insertStart(definition, this.withCaller(validated, traceParent, 'start()'), opts),
    );
  }

  private insertStart(
    definition: WorkflowDefinition,
    fields: NewWorkflow,
    opts: StartOptions,
  ): Promise<WorkflowEntity> {
    // On PostgreSQL (no caller's transaction) the writes travel with the COMMIT in one message,
    // so the one-ongoing-per-hero index refuses the workflow there, not at its INSERT: the
    // refusal is mapped for the whole transaction (a new workflow's rows meet no other unique
    // index).
    const run = async () => {
      try {
        const created = await this.repository.transaction(
          async (uow) => {
            const inserted = await this.repository.insertWorkflow(uow, fields);
            const first = definition.steps.nextAfter(null);
            if (first)
              await this.scheduler.createExecution(uow, inserted, definition, first, first.waitMs);
            else await this.scheduler.finishWorkflow(uow, inserted);
            return inserted;
          },
          { caller: opts.manager, hotPath: true },
        );
        // After the transaction: a refused start must not log a creation.
        this.logger.log(
          `${definition.name} id=${created.id}: created workflow with ${definition.steps.runnable.length} step(s) defined`,
        );
        return created;
      } catch (error) {
        if (!this.repository.isUniqueViolation(error)) throw error;
        throw new WorkflowAlreadyOngoingError(
          `An ongoing ${definition.name} already exists for ${fields.heroType} ${fields.heroId}. ` +
            'Wait for it to finish, cancel it, or pass allowMultiple: true.',
        );
      }
    };
    // A start that lost a deadlock (the unique index against a concurrent start) wrote nothing.
    return opts.manager ? run() : retryLockConflicts(run, LOCK_CONFLICT_RETRY_DELAYS_MS);
  }

  /**
   * Starts many workflows of one type (SPEC §16.7): every entry validated as `start()` validates
   * (an entry's own `manager` is refused: the call's `options.manager` is the transaction), then
   * one transaction with multi-row writes and one bulk enqueue after commit (after the caller's
   * commit with `manager`). Resolves the workflows in input order. `onConflict: 'error'` (the
   * default) rejects with `WorkflowAlreadyOngoingError` naming every hero that has an ongoing
   * workflow of this type or appears twice in `starts` (entries with `allowMultiple: true` never
   * conflict), and writes nothing; `'skip'` leaves those entries out (null at their positions; of
   * duplicates in the call, the first wins). At most 10,000 entries.
   */
  async startMany(
    workflow: WorkflowRef,
    starts: StartOptions[],
    options: { manager?: EntityManager; onConflict?: 'error' | 'skip' } = {},
  ): Promise<Array<WorkflowEntity | null>> {
    rejectUnknownKeys(options, START_MANY_OPTION_KEYS, 'startMany()');
    const onConflict = options.onConflict ?? 'error';
    if (onConflict !== 'error' && onConflict !== 'skip') {
      throw new InvalidArgumentError(
        `startMany() onConflict must be 'error' or 'skip', but was ${describeValue(onConflict)}.`,
      );
    }
    const definition = this.resolveRef(workflow, 'startMany()');
    if (!Array.isArray(starts)) {
      throw new InvalidArgumentError(
        `startMany() takes an array of start options, but got ${describeValue(starts)}.`,
      );
    }
    if (starts.length > MAX_START_MANY) {
      throw new InvalidArgumentError(
        `startMany() takes at most ${MAX_START_MANY} entries per call, but got ${starts.length}: split them into several calls.`,
      );
    }
    const entries = starts.map((opts: unknown, index) => {
      const method = `startMany() starts[${index}]`;
      try {
        return this.validatedStart(opts, definition, START_MANY_ENTRY_KEYS, method);
      } catch (error) {
        if (error instanceof GenevaDriveError && !error.message.startsWith(method)) {
          error.message = `${method}: ${error.message}`;
        }
        throw error;
      }
    });
    if (entries.length === 0) return [];
    return this.tracer.inCallSpan(
      'geneva_drive.start',
      {
        'geneva_drive.workflow.class': definition.name,
        'geneva_drive.start.count': entries.length,
      },
      (traceParent) => {
        const rows = entries.map((entry, index) =>
          this.withCaller(entry, traceParent, `startMany() starts[${index}]`),
        );
        const run = () =>
          this.repository.transaction((uow) => this.insertMany(uow, definition, rows, onConflict), {
            caller: options.manager,
          });
        // Two bulk inserts over the same heroes can deadlock on the unique index (InnoDB's insert
        // intention locks): the loser rolled back, wrote nothing and enqueued nothing, so it runs again.
        return options.manager ? run() : retryLockConflicts(run, LOCK_CONFLICT_RETRY_DELAYS_MS);
      },
    );
  }

  /**
   * What the call adds to a validated entry: the CLS keys of the caller's store (merged under
   * the given context), and the start span's traceparent, both where the migration has run.
   */
  private withCaller(fields: NewWorkflow, traceParent: string | null, method: string): NewWorkflow {
    if (!this.repository.features.workflowContext) return fields;
    const captured = this.cls.capture();
    let context = fields.context ?? null;
    if (captured) {
      context = { ...captured, ...context };
      checkContextSize(context, method);
    }
    return {
      ...fields,
      ...(context ? { context } : {}),
      ...(traceParent ? { traceParent } : {}),
    };
  }

  /**
   * The workflow, or null for an unknown id (including a string that is not a UUID). An id that
   * is not a string rejects with `InvalidArgumentError`.
   */
  async find(id: string): Promise<WorkflowEntity | null> {
    if (typeof id !== 'string') {
      throw new InvalidArgumentError(
        `find() takes a workflow id string, but got ${describeValue(id)}.`,
      );
    }
    if (!isUuid(id)) return null;
    return this.repository.findWorkflow(id.toLowerCase());
  }

  /** The ongoing workflow of this type for this hero, if any. */
  async findOngoing(workflow: WorkflowRef, hero: object): Promise<WorkflowEntity | null> {
    const definition = this.resolveRef(workflow, 'findOngoing()');
    return this.repository.findOngoing(
      definition.name,
      this.identifyHero(hero, definition, 'findOngoing()'),
    );
  }

  /** Workflows matching the filter, newest first. */
  async list(filter: ListFilter = {}): Promise<WorkflowEntity[]> {
    rejectUnknownKeys(filter, LIST_FILTER_KEYS, 'list()');
    validateListFilter(filter);
    const definition =
      filter.workflow === undefined ? undefined : this.resolveRef(filter.workflow, 'list()');
    return this.repository.listWorkflows({
      type: definition?.name,
      states: filter.state === undefined ? undefined : [filter.state].flat(),
      ongoing: filter.ongoing,
      hero:
        filter.hero === undefined
          ? undefined
          : this.identifyHero(filter.hero, definition, 'list()'),
      limit: filter.limit,
      offset: filter.offset,
    });
  }

  /**
   * Delivers a signal (validated first; then one transaction under the workflow row lock). A known
   * `(name, idempotencyKey)` returns the original row with `duplicateDelivery: true`.
   */
  async signal(
    workflow: WorkflowLike,
    name: string,
    opts: SignalOptions = {},
  ): Promise<SignalEntity> {
    const id = workflowIdOf(workflow, 'signal()');
    if (!this.tracer.enabled) return this.signalSender.send(id, name, opts);
    return this.tracer.inCallSpan(
      'geneva_drive.signal',
      {
        'geneva_drive.workflow.id': id,
        'geneva_drive.signal.name': typeof name === 'string' ? name : String(name),
      },
      () => this.signalSender.send(id, name, opts),
    );
  }

  /** Pauses a ready workflow now, or a performing one at the step boundary. */
  pause(workflow: WorkflowLike): Promise<WorkflowEntity> {
    return this.operator.pause(workflow);
  }

  /**
   * Resumes a paused workflow: re-enqueues its scheduled execution keeping `scheduled_for`, or
   * creates a fresh execution of `next_step_name`. A step that no longer exists raises
   * `StepNotDefinedError` and the workflow stays paused.
   */
  resume(workflow: WorkflowLike): Promise<WorkflowEntity> {
    return this.operator.resume(workflow);
  }

  /** Resumes a paused workflow at the given step; resolves to the new execution. */
  resumeAt(workflow: WorkflowLike, stepName: string): Promise<StepExecutionEntity> {
    return this.operator.resumeAt(workflow, stepName);
  }

  /** Skips the current step of a ready or paused workflow and schedules the next one. */
  skip(workflow: WorkflowLike): Promise<WorkflowEntity> {
    return this.operator.skip(workflow);
  }

  /** Cancels a ready or paused workflow now, or a performing one at the step boundary. */
  cancel(workflow: WorkflowLike): Promise<WorkflowEntity> {
    return this.operator.cancel(workflow);
  }

  /** Every execution, oldest first. */
  async executionHistory(workflow: WorkflowLike): Promise<StepExecutionEntity[]> {
    const id = await this.existingId(workflow, 'executionHistory()');
    return this.repository.executionHistory(id);
  }

  /** The execution in scheduled, waiting or in_progress, if any. */
  async currentExecution(workflow: WorkflowLike): Promise<StepExecutionEntity | null> {
    return this.repository.currentExecution(
      null,
      await this.existingId(workflow, 'currentExecution()'),
    );
  }

  /** Every signal delivered to the workflow, oldest first. */
  async signals(workflow: WorkflowLike): Promise<SignalEntity[]> {
    const id = await this.existingId(workflow, 'signals()');
    await this.signalSender.requireSignalsMigration();
    return this.repository.signalsOf(id);
  }

  /** Sets (or with null clears) the instance's step job options, stored in `metadata`. */
  setStepJobOptions(workflow: WorkflowLike, opts: StepJobOptions | null): Promise<WorkflowEntity> {
    return this.operator.setStepJobOptions(workflow, opts);
  }

  /** The runnable step before the current (or next) one; the last step of a finished workflow. */
  async previousStepName(workflow: WorkflowLike): Promise<string | null> {
    const row = await this.load(workflow, 'previousStepName()');
    const definition = this.registry.resolve(row.type);
    const reference = row.currentStepName ?? row.nextStepName;
    if (reference) return definition.steps.previousBefore(reference)?.name ?? null;
    if (row.state === 'finished') return definition.steps.runnable.at(-1)?.name ?? null;
    return null;
  }

  /** Removed-step name ⇒ rows of ongoing workflows of that class still carrying it. */
  async removedStepsInFlight(workflow: WorkflowRef): Promise<Record<string, number>> {
    const definition = this.resolveRef(workflow, 'removedStepsInFlight()');
    const removed = definition.steps.removed.map((step) => step.name);
    if (removed.length === 0) return {};
    return this.repository.countOngoingAtSteps(definition.name, removed);
  }

  /** Runs `fn` with jobs enqueued at once instead of after commit (for bulk creation). Nestable. */
  async withInlineEnqueue<T>(fn: () => Promise<T>): Promise<T> {
    if (typeof fn !== 'function') {
      throw new InvalidArgumentError(
        `withInlineEnqueue() takes a function returning a promise, but got ${describeValue(fn)}.`,
      );
    }
    return inlineEnqueueStorage.run(true, fn);
  }

  /**
   * The one validation of a start entry (`start()` and every entry of `startMany()`): known keys,
   * hero, allowMultiple, metadata and instance step job options, into the row to insert.
   */
  private validatedStart(
    opts: unknown,
    definition: WorkflowDefinition,
    allowedKeys: string[],
    method: string,
  ): NewWorkflow {
    rejectUnknownKeys(opts as object, allowedKeys, method);
    const start = opts as StartOptions;
    const identity =
      start.hero === undefined || start.hero === null
        ? null
        : this.identifyHero(start.hero, definition, method);
    if (start.allowMultiple !== undefined && typeof start.allowMultiple !== 'boolean') {
      throw new InvalidArgumentError(
        `${method} allowMultiple must be a boolean, but was ${describeValue(start.allowMultiple)}.`,
      );
    }
    const metadata: Record<string, unknown> = { ...startMetadata(start.metadata) };
    if (start.stepJobOptions !== undefined && start.stepJobOptions !== null) {
      metadata.stepJobOptions = validateStepJobOptions(
        start.stepJobOptions,
        `${definition.name} instance stepJobOptions (start)`,
      );
    }
    const context = startContext(start.context, method);
    if (context && !this.repository.features.workflowContext) {
      throw new MissingMigrationError(
        `${method} context needs the workflow-context migration, which has not run: add GENEVA_DRIVE_MIGRATIONS to your DataSource migrations and run them.`,
      );
    }
    return {
      type: definition.name,
      heroType: identity?.heroType ?? null,
      heroId: identity?.heroId ?? null,
      allowMultiple: start.allowMultiple ?? false,
      metadata: Object.keys(metadata).length > 0 ? metadata : null,
      ...(context ? { context } : {}),
    };
  }

  /** The body of `startMany()`'s transaction: conflicts, multi-row inserts, first executions. */
  private async insertMany(
    uow: RepositoryTransaction,
    definition: WorkflowDefinition,
    entries: readonly NewWorkflow[],
    onConflict: 'error' | 'skip',
  ): Promise<Array<WorkflowEntity | null>> {
    const keyOf = (hero: HeroIdentity) => `${hero.heroType}\u001f${hero.heroId}`;
    // Only rows the one-ongoing-per-hero index covers can conflict.
    const covered = (entry: NewWorkflow): entry is NewWorkflow & HeroIdentity =>
      !entry.allowMultiple && entry.heroType !== null && entry.heroId !== null;
    const seen = new Set<string>();
    const duplicates = new Map<string, HeroIdentity>();
    const heroes: HeroIdentity[] = [];
    for (const entry of entries) {
      if (!covered(entry)) continue;
      const key = keyOf(entry);
      if (seen.has(key)) duplicates.set(key, entry);
      else {
        seen.add(key);
        heroes.push({ heroType: entry.heroType, heroId: entry.heroId });
      }
    }
    const ongoing = new Map<string, HeroIdentity>();
    for (const hero of await this.repository.ongoingHeroes(uow, definition.name, heroes)) {
      ongoing.set(keyOf(hero), hero);
    }
    if (onConflict === 'error' && (ongoing.size > 0 || duplicates.size > 0)) {
      throw new WorkflowAlreadyOngoingError(conflictMessage(definition.name, ongoing, duplicates));
    }
    const first = definition.steps.nextAfter(null);
    const included: number[] = [];
    const rows: NewBulkWorkflow[] = [];
    const taken = new Set<string>();
    entries.forEach((entry, index) => {
      if (covered(entry)) {
        const key = keyOf(entry);
        if (ongoing.has(key) || taken.has(key)) return;
        taken.add(key);
      }
      included.push(index);
      rows.push({ ...entry, nextStepName: first?.name ?? null });
    });
    let inserted: Array<WorkflowEntity | null>;
    try {
      inserted = await this.repository.insertWorkflows(uow, rows, onConflict);
    } catch (error) {
      if (!this.repository.isUniqueViolation(error)) throw error;
      throw new WorkflowAlreadyOngoingError(
        `An ongoing ${definition.name} was started meanwhile for one of the heroes of this startMany() call; nothing was started. ` +
          "Retry, or pass onConflict: 'skip'.",
      );
    }
    const results: Array<WorkflowEntity | null> = entries.map(() => null);
    inserted.forEach((row, position) => (results[included[position]] = row));
    const created = inserted.filter((row): row is WorkflowEntity => row !== null);
    if (first) await this.scheduler.createExecutions(uow, created, definition, first, first.waitMs);
    else for (const row of created) await this.scheduler.finishWorkflow(uow, row);
    this.logger.log(
      `${definition.name}: created ${created.length} workflow(s) with startMany() (${entries.length - created.length} skipped), ${definition.steps.runnable.length} step(s) defined`,
    );
    return results;
  }

  private async load(workflow: WorkflowLike, method: string): Promise<WorkflowEntity> {
    const id = workflowIdOf(workflow, method);
    const row = await this.find(id);
    if (!row) throw workflowNotFound(id);
    return row;
  }

  private async existingId(workflow: WorkflowLike, method: string): Promise<string> {
    return (await this.load(workflow, method)).id;
  }

  /**
   * A `WorkflowRef`: a registered name or a `@Workflow` class (else `StepConfigurationError`,
   * SPEC §14.11); any other kind of value is an `InvalidArgumentError`.
   */
  private resolveRef(ref: WorkflowRef, method: string): WorkflowDefinition {
    if (typeof ref === 'string') {
      const definition = this.registry.findByName(ref);
      if (definition) return definition;
      throw new StepConfigurationError(
        `No workflow registered as ${describeValue(ref)}. Decorate the class with @Workflow() and list it in a module's providers.`,
      );
    }
    if (typeof ref !== 'function') {
      throw new InvalidArgumentError(
        `${method} takes a @Workflow class or its registered name, but got ${describeValue(ref)}.`,
      );
    }
    return this.registry.resolve(ref);
  }

  private identifyHero(hero: unknown, definition: WorkflowDefinition | undefined, method: string) {
    return this.repository.identifyHero(hero, definition, method);
  }
}
