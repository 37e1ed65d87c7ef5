import { Injectable, Logger } from '@nestjs/common';
import { In } from 'typeorm';
import { describeValue, isPlainObject, jsonDataProblem } from '../common/input-guards';
import { WORKFLOW_STATES } from '../common/states';
import { isUuid } from '../common/uuid';
import { validateStepJobOptions } from '../common/step-job-options.validator';
import { workflowIdOf, workflowNotFound } from '../common/workflow-like';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import { SignalEntity } from '../entities/signal.entity';
import { StepExecutionEntity } from '../entities/step-execution.entity';
import { WorkflowEntity } from '../entities/workflow.entity';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { InvalidStateError } from '../errors/invalid-state.error';
import { StepConfigurationError } from '../errors/step-configuration.error';
import { StepNotDefinedError } from '../errors/step-not-defined.error';
import { WorkflowAlreadyOngoingError } from '../errors/workflow-already-ongoing.error';
import type { StepJobOptions } from '../interfaces/job-options.interface';
import type {
  ListFilter,
  SignalOptions,
  StartOptions,
  WorkflowLike,
  WorkflowRef,
} from '../interfaces/workflow-service.interface';
import { GenevaDriveDataSource } from '../persistence/geneva-drive-data-source';
import { isUniqueViolation } from '../persistence/sql-dialect';
import type { UnitOfWork } from '../persistence/unit-of-work';
import { WorkflowStore } from '../persistence/workflow.store';
import { inlineEnqueueStorage } from '../queue/inline-enqueue.context';
import { terminalTransition } from '../runner/execution-transitions';
import { HeroResolver } from '../runner/hero-resolver';
import { WorkflowScheduler } from '../runner/workflow-scheduler';
import { SignalRendezvous } from '../signals/signal-rendezvous';
import { SignalSender } from '../signals/signal-sender';
import { identifyHero } from './hero-arguments';

const START_OPTION_KEYS = ['hero', 'allowMultiple', 'metadata', 'stepJobOptions', 'manager'];
const LIST_FILTER_KEYS = ['workflow', 'state', 'hero', 'ongoing', 'limit', 'offset'];
const ONGOING = ['ready', 'performing', 'paused'] as const;

/** Starts, inspects and steers workflows. Inject it anywhere. */
@Injectable()
export class WorkflowService {
  private readonly logger = new Logger('GenevaDrive');

  constructor(
    private readonly database: GenevaDriveDataSource,
    private readonly registry: WorkflowRegistry,
    private readonly store: WorkflowStore,
    private readonly scheduler: WorkflowScheduler,
    private readonly heroes: HeroResolver,
    private readonly signalSender: SignalSender,
    private readonly rendezvous: SignalRendezvous,
  ) {}

  /**
   * Creates the workflow and its first step execution, and enqueues it after commit (after the
   * caller's commit with `manager`). A second ongoing workflow of the same type for the same hero
   * rejects with `WorkflowAlreadyOngoingError`.
   */
  async start(workflow: WorkflowRef, opts: StartOptions = {}): Promise<WorkflowEntity> {
    rejectUnknownKeys(opts, START_OPTION_KEYS, 'start()');
    const definition = this.resolveRef(workflow, 'start()');
    const identity =
      opts.hero === undefined || opts.hero === null
        ? null
        : this.identifyHero(opts.hero, definition, 'start()');
    if (opts.allowMultiple !== undefined && typeof opts.allowMultiple !== 'boolean') {
      throw new InvalidArgumentError(
        `start() allowMultiple must be a boolean, but was ${describeValue(opts.allowMultiple)}.`,
      );
    }
    const metadata: Record<string, unknown> = { ...startMetadata(opts.metadata) };
    if (opts.stepJobOptions !== undefined && opts.stepJobOptions !== null) {
      metadata.stepJobOptions = validateStepJobOptions(
        opts.stepJobOptions,
        `${definition.name} instance stepJobOptions (start)`,
      );
    }
    return this.database.transaction(async (uow) => {
      let created: WorkflowEntity;
      try {
        created = await this.store.insertWorkflow(uow, {
          type: definition.name,
          heroType: identity?.heroType ?? null,
          heroId: identity?.heroId ?? null,
          allowMultiple: opts.allowMultiple ?? false,
          metadata: Object.keys(metadata).length > 0 ? metadata : null,
        });
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        throw new WorkflowAlreadyOngoingError(
          `An ongoing ${definition.name} already exists for ${identity?.heroType} ${identity?.heroId}. ` +
            'Wait for it to finish, cancel it, or pass allowMultiple: true.',
        );
      }
      const first = definition.steps.nextAfter(null);
      if (first)
        await this.scheduler.createExecution(uow, created, definition, first, first.waitMs);
      else await this.scheduler.finishWorkflow(uow, created);
      this.logger.log(
        `${definition.name} id=${created.id}: created workflow with ${definition.steps.runnable.length} step(s) defined`,
      );
      return created;
    }, opts.manager);
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
    return this.database.manager.findOne(WorkflowEntity, { where: { id: id.toLowerCase() } });
  }

  /** The ongoing workflow of this type for this hero, if any. */
  async findOngoing(workflow: WorkflowRef, hero: object): Promise<WorkflowEntity | null> {
    const definition = this.resolveRef(workflow, 'findOngoing()');
    const { heroType, heroId } = this.identifyHero(hero, definition, 'findOngoing()');
    return this.database.manager.findOne(WorkflowEntity, {
      where: { type: definition.name, heroType, heroId, state: In([...ONGOING]) },
      order: { createdAt: 'DESC', id: 'DESC' },
    });
  }

  /** Workflows matching the filter, newest first. */
  async list(filter: ListFilter = {}): Promise<WorkflowEntity[]> {
    rejectUnknownKeys(filter, LIST_FILTER_KEYS, 'list()');
    validateListFilter(filter);
    const query = this.database.manager
      .createQueryBuilder(WorkflowEntity, 'workflow')
      .orderBy('workflow.createdAt', 'DESC')
      .addOrderBy('workflow.id', 'DESC');
    const definition =
      filter.workflow === undefined ? undefined : this.resolveRef(filter.workflow, 'list()');
    if (definition) query.andWhere('workflow.type = :type', { type: definition.name });
    if (filter.state !== undefined) {
      query.andWhere('workflow.state IN (:...states)', { states: [filter.state].flat() });
    }
    if (filter.ongoing !== undefined) {
      query.andWhere(`workflow.state ${filter.ongoing ? '' : 'NOT '}IN (:...ongoing)`, {
        ongoing: [...ONGOING],
      });
    }
    if (filter.hero !== undefined) {
      const { heroType, heroId } = this.identifyHero(filter.hero, definition, 'list()');
      query.andWhere('workflow.heroType = :heroType AND workflow.heroId = :heroId', {
        heroType,
        heroId,
      });
    }
    if (filter.limit !== undefined) query.take(filter.limit);
    if (filter.offset !== undefined) query.skip(filter.offset);
    return query.getMany();
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
    return this.signalSender.send(workflowIdOf(workflow, 'signal()'), name, opts);
  }

  /** Pauses a ready workflow now, or a performing one at the step boundary. */
  pause(workflow: WorkflowLike): Promise<WorkflowEntity> {
    return this.steer(workflow, 'pause()', async (_uow, locked) => {
      if (locked.state !== 'ready' && locked.state !== 'performing') {
        throw new InvalidStateError(
          `Cannot pause a ${locked.state} workflow (only ready or performing ones).`,
        );
      }
      await this.store.updateWorkflow(_uow, locked, {
        state: 'paused',
        transitionedAt: new Date(),
      });
    });
  }

  /**
   * Resumes a paused workflow: re-enqueues its scheduled execution keeping `scheduled_for`, or
   * creates a fresh execution of `next_step_name`. A step that no longer exists raises
   * `StepNotDefinedError` and the workflow stays paused.
   */
  resume(workflow: WorkflowLike): Promise<WorkflowEntity> {
    return this.steer(workflow, 'resume()', async (uow, locked, definition) => {
      if (locked.state !== 'paused') {
        throw new InvalidStateError(`Cannot resume a ${locked.state} workflow (only paused ones).`);
      }
      const current = await this.store.currentExecution(uow.manager, locked.id, uow.locks);
      if (current?.state === 'in_progress') {
        await this.store.updateWorkflow(uow, locked, { state: 'performing', transitionedAt: null });
        return;
      }
      if (current) {
        await this.store.updateWorkflow(uow, locked, { state: 'ready', transitionedAt: null });
        const currentStep = definition.steps.named(current.stepName);
        if (current.state === 'waiting' && currentStep?.kind === 'removed') {
          await this.store.updateExecution(uow, current, terminalTransition('skipped', 'skipped'));
          await this.rendezvous.settle(uow, current.signalId, [current.stepName]);
          await this.store.updateWorkflow(uow, locked, {
            currentStepName: null,
            nextStepName: current.stepName,
          });
          await this.scheduler.scheduleNextStep(uow, locked, definition);
        } else if (current.state === 'waiting') {
          await this.rendezvous.retryParked(uow, locked, definition, current, {
            workflow: locked,
            hero: await this.loadHero(uow, locked),
          });
        } else if (current.state === 'scheduled') {
          await this.scheduler.reenqueueExecution(uow, locked, definition, current, {
            metadata: { ...(current.metadata ?? {}), reattemptCountReset: true },
          });
        }
        return;
      }
      if (locked.nextStepName === null) {
        await this.scheduler.finishWorkflow(uow, locked);
        return;
      }
      const step = definition.steps.named(locked.nextStepName);
      if (!step || step.kind === 'removed') {
        throw new StepNotDefinedError(
          `Cannot resume ${definition.name} ${locked.id}: step '${locked.nextStepName}' is no longer defined. ` +
            `Call resumeAt(workflow, stepName) with one of: ${runnableNames(definition)}; or cancel() it; ` +
            `or declare @RemovedStep('${locked.nextStepName}') where the step used to be so in-flight workflows skip it.`,
        );
      }
      await this.store.updateWorkflow(uow, locked, {
        state: 'ready',
        transitionedAt: null,
        currentStepName: null,
      });
      const interrupted =
        step.kind === 'resumable'
          ? await this.resumableToContinue(uow, locked.id, step.name)
          : null;
      if (interrupted) {
        await this.scheduler.createSuccessor(uow, locked, definition, step, interrupted, null, {
          metadata: { reattemptCountReset: true },
        });
      } else {
        await this.scheduler.createExecution(uow, locked, definition, step, null, {
          metadata: { reattemptCountReset: true },
        });
      }
    });
  }

  /**
   * The newest execution of a resumable step that stopped mid-chain (paused mid-iteration, or
   * failed after a checkpoint) and has no successor yet: `resume()` continues from its cursor.
   */
  private async resumableToContinue(
    uow: UnitOfWork,
    workflowId: string,
    stepName: string,
  ): Promise<StepExecutionEntity | null> {
    if (!this.database.features.resumable) return null;
    const [latest] = await this.store.executionsOfStep(uow.manager, workflowId, stepName);
    if (!latest) return null;
    const stopped =
      latest.outcome === 'workflow_paused' || (latest.state === 'failed' && latest.cursor !== null);
    if (!stopped) return null;
    const successor = await uow.manager.findOne(StepExecutionEntity, {
      where: { continuesFromId: latest.id },
    });
    return successor ? null : latest;
  }

  /** Resumes a paused workflow at the given step; resolves to the new execution. */
  async resumeAt(workflow: WorkflowLike, stepName: string): Promise<StepExecutionEntity> {
    if (typeof stepName !== 'string') {
      throw new InvalidArgumentError(
        `resumeAt() takes the name of a step to resume at, but got ${describeValue(stepName)}.`,
      );
    }
    let created: StepExecutionEntity | null = null;
    await this.steer(workflow, 'resumeAt()', async (uow, locked, definition) => {
      if (locked.state !== 'paused') {
        throw new InvalidStateError(
          `Cannot resumeAt a ${locked.state} workflow (only paused ones).`,
        );
      }
      const step = definition.steps.named(stepName);
      if (!step || step.kind === 'removed') {
        throw new StepNotDefinedError(
          `Cannot resume ${definition.name} at '${stepName}': that step is ${step ? 'a removed step' : 'not defined'}. ` +
            `The steps it can be resumed at are: ${runnableNames(definition)}.`,
        );
      }
      await this.store.updateWorkflow(uow, locked, {
        state: 'ready',
        transitionedAt: null,
        currentStepName: null,
      });
      created = await this.scheduler.createExecution(uow, locked, definition, step, null, {
        metadata: { reattemptCountReset: true },
      });
    });
    return created!;
  }

  /** Skips the current step of a ready or paused workflow and schedules the next one. */
  skip(workflow: WorkflowLike): Promise<WorkflowEntity> {
    return this.steer(workflow, 'skip()', async (uow, locked, definition) => {
      if (locked.state !== 'ready' && locked.state !== 'paused') {
        throw new InvalidStateError(
          locked.state === 'performing'
            ? 'Cannot skip a performing workflow: its step is running. Pause it (takes effect at the step boundary), then skip.'
            : `Cannot skip a ${locked.state} workflow (only ready or paused ones).`,
        );
      }
      let reference = locked.nextStepName;
      if (locked.state === 'ready') {
        const current = await this.store.currentExecution(uow.manager, locked.id, uow.locks);
        if (current) {
          await this.store.updateExecution(uow, current, terminalTransition('skipped', 'skipped'));
          await this.rendezvous.settle(uow, current.signalId, [current.stepName]);
          reference = current.stepName;
        }
      } else if (reference !== null) {
        // The paused workflow's failed step: its claimed signal is settled by the skip.
        const [latest] = await this.store.executionsOfStep(uow.manager, locked.id, reference);
        if (latest?.signalId) await this.rendezvous.settle(uow, latest.signalId, [reference]);
      }
      await this.store.updateWorkflow(uow, locked, {
        state: 'ready',
        transitionedAt: null,
        currentStepName: null,
        nextStepName: reference,
      });
      await this.scheduler.scheduleNextStep(uow, locked, definition);
    });
  }

  /** Cancels a ready or paused workflow now, or a performing one at the step boundary. */
  cancel(workflow: WorkflowLike): Promise<WorkflowEntity> {
    return this.steer(workflow, 'cancel()', async (uow, locked) => {
      if (locked.state === 'finished' || locked.state === 'canceled') {
        throw new InvalidStateError(`Cannot cancel a ${locked.state} workflow.`);
      }
      const current = await this.store.currentExecution(uow.manager, locked.id, uow.locks);
      if (current && current.state !== 'in_progress') {
        await this.store.updateExecution(uow, current, terminalTransition('canceled', 'canceled'));
      }
      await this.store.updateWorkflow(uow, locked, {
        state: 'canceled',
        transitionedAt: new Date(),
      });
    });
  }

  /** Every execution, oldest first. */
  async executionHistory(workflow: WorkflowLike): Promise<StepExecutionEntity[]> {
    const id = await this.existingId(workflow, 'executionHistory()');
    return this.database.manager.find(StepExecutionEntity, {
      where: { workflowId: id },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** The execution in scheduled, waiting or in_progress, if any. */
  async currentExecution(workflow: WorkflowLike): Promise<StepExecutionEntity | null> {
    return this.store.currentExecution(
      this.database.manager,
      await this.existingId(workflow, 'currentExecution()'),
    );
  }

  /** Every signal delivered to the workflow, oldest first. */
  async signals(workflow: WorkflowLike): Promise<SignalEntity[]> {
    const id = await this.existingId(workflow, 'signals()');
    await this.signalSender.requireSignalsMigration();
    return this.database.manager.find(SignalEntity, {
      where: { workflowId: id },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** Sets (or with null clears) the instance's step job options, stored in `metadata`. */
  async setStepJobOptions(
    workflow: WorkflowLike,
    opts: StepJobOptions | null,
  ): Promise<WorkflowEntity> {
    if (opts === undefined) {
      throw new StepConfigurationError(
        'setStepJobOptions() takes job options ({ queue?, priority?, wait?, waitUntil? }) or null to clear them, but got undefined.',
      );
    }
    // Checked before the lock (nothing is written on bad input); the message names the workflow class once known.
    if (opts !== null) validateStepJobOptions(opts, 'instance stepJobOptions (setStepJobOptions)');
    return this.steer(workflow, 'setStepJobOptions()', async (uow, locked, definition) => {
      const metadata: Record<string, unknown> = { ...(locked.metadata ?? {}) };
      if (opts === null) delete metadata.stepJobOptions;
      else
        metadata.stepJobOptions = validateStepJobOptions(
          opts,
          `${definition.name} instance stepJobOptions (setStepJobOptions)`,
        );
      await this.store.updateWorkflow(uow, locked, {
        metadata: Object.keys(metadata).length > 0 ? metadata : null,
      });
    });
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
    const rows = await this.database.manager
      .createQueryBuilder(StepExecutionEntity, 'execution')
      .innerJoin(WorkflowEntity, 'workflow', 'workflow.id = execution.workflowId')
      .select('execution.stepName', 'stepName')
      .addSelect('COUNT(*)', 'count')
      .where('workflow.type = :type', { type: definition.name })
      .andWhere('workflow.state IN (:...ongoing)', { ongoing: [...ONGOING] })
      .andWhere('execution.stepName IN (:...removed)', { removed })
      .groupBy('execution.stepName')
      .getRawMany<{ stepName: string; count: string | number }>();
    return Object.fromEntries(rows.map((row) => [row.stepName, Number(row.count)]));
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

  /** Locks the workflow, runs an operator verb on it, and resolves to the reloaded row. */
  private async steer(
    workflow: WorkflowLike,
    method: string,
    verb: (
      uow: UnitOfWork,
      locked: WorkflowEntity,
      definition: WorkflowDefinition,
    ) => Promise<void>,
  ): Promise<WorkflowEntity> {
    const id = workflowIdOf(workflow, method);
    if (!isUuid(id)) throw workflowNotFound(id);
    return this.database.transaction(async (uow) => {
      const locked = await this.store.lockWorkflow(uow, id);
      if (!locked) throw workflowNotFound(id);
      await verb(uow, locked, this.registry.resolve(locked.type));
      return locked;
    });
  }

  private async loadHero(uow: UnitOfWork, workflow: WorkflowEntity): Promise<object | null> {
    if (!workflow.heroType || !workflow.heroId) return null;
    return this.heroes.load(uow, workflow.heroType, workflow.heroId);
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
    return identifyHero(this.database.dataSource, this.heroes, hero, definition, method);
  }
}

/**
 * `start()` metadata: a plain object of JSON data (or nothing). `stepJobOptions` is reserved for
 * the validated instance job options, which the `stepJobOptions` option sets.
 */
function startMetadata(metadata: unknown): Record<string, unknown> {
  if (metadata === undefined || metadata === null) return {};
  if (!isPlainObject(metadata)) {
    throw new InvalidArgumentError(
      `start() metadata must be a plain object ({ key: value }), but was ${describeValue(metadata)}.`,
    );
  }
  if ('stepJobOptions' in metadata) {
    throw new InvalidArgumentError(
      'start() metadata.stepJobOptions is reserved for instance job options: pass them as start(workflow, { stepJobOptions }) so they are validated.',
    );
  }
  const problem = jsonDataProblem(metadata, 'metadata');
  if (problem) throw new InvalidArgumentError(`start() ${problem}.`);
  return metadata;
}

function validateListFilter(filter: ListFilter): void {
  const { state, ongoing, limit, offset } = filter;
  const states = state === undefined ? [] : [state].flat();
  if (
    state !== undefined &&
    ((Array.isArray(state) && state.length === 0) ||
      states.some((s) => !WORKFLOW_STATES.includes(s)))
  ) {
    throw new InvalidArgumentError(
      `list() state must be one of ${WORKFLOW_STATES.join(', ')}, or a non-empty array of them, but was ${describeValue(
        Array.isArray(state) ? (states.find((s) => !WORKFLOW_STATES.includes(s)) ?? state) : state,
      )}.`,
    );
  }
  if (ongoing !== undefined && typeof ongoing !== 'boolean') {
    throw new InvalidArgumentError(
      `list() ongoing must be a boolean, but was ${describeValue(ongoing)}.`,
    );
  }
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0)) {
    throw new InvalidArgumentError(
      `list() limit must be a positive integer, but was ${describeValue(limit)}.`,
    );
  }
  if (offset !== undefined && !(Number.isSafeInteger(offset) && offset >= 0)) {
    throw new InvalidArgumentError(
      `list() offset must be an integer >= 0, but was ${describeValue(offset)}.`,
    );
  }
}

function runnableNames(definition: WorkflowDefinition): string {
  return definition.steps.runnable.map((step) => step.name).join(', ') || '(none)';
}

function rejectUnknownKeys(options: object, allowed: string[], method: string): void {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(
      `${method} expects an options object ({ ${allowed.join(', ')} }), but got ${describeValue(options)}.`,
    );
  }
  const unknown = Object.keys(options).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(
      `${method} got unknown option(s) ${unknown.join(', ')}. Allowed: ${allowed.join(', ')}.`,
    );
  }
}
