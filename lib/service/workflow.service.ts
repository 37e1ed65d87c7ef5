import { Injectable, Logger } from '@nestjs/common';
import { describeValue } from '../common/input-guards';
import { isUuid } from '../common/uuid';
import { validateStepJobOptions } from '../common/step-job-options.validator';
import { workflowIdOf, workflowNotFound } from '../common/workflow-like';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import type { SignalEntity } from '../entities/signal.entity';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
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
import { WorkflowRepository } from '../ports/workflow.repository';
import { OperatorVerbs } from './operator-verbs';
import { rejectUnknownKeys, startMetadata, validateListFilter } from './service-arguments';

const START_OPTION_KEYS = ['hero', 'allowMultiple', 'metadata', 'stepJobOptions', 'manager'];
const LIST_FILTER_KEYS = ['workflow', 'state', 'hero', 'ongoing', 'limit', 'offset'];
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
    return this.repository.transaction(
      async (uow) => {
        let created: WorkflowEntity;
        try {
          created = await this.repository.insertWorkflow(uow, {
            type: definition.name,
            heroType: identity?.heroType ?? null,
            heroId: identity?.heroId ?? null,
            allowMultiple: opts.allowMultiple ?? false,
            metadata: Object.keys(metadata).length > 0 ? metadata : null,
          });
        } catch (error) {
          if (!this.repository.isUniqueViolation(error)) throw error;
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
      },
      { caller: opts.manager },
    );
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
    return this.signalSender.send(workflowIdOf(workflow, 'signal()'), name, opts);
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
