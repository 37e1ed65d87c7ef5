import { Injectable, Logger } from '@nestjs/common';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import type { StepDefinition } from '../discovery/step-definition.interface';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import type { SignalEntity } from '../entities/signal.entity';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import { StepConfigurationError } from '../errors/step-configuration.error';
import { MissingMigrationError } from '../errors/missing-migration.error';
import { StepNotDefinedError } from '../errors/step-not-defined.error';
import type { WorkflowContext } from '../interfaces/workflow-context.interface';
import { publishPark, publishPrecondition } from '../observability/diagnostics';
import { TaggedLogger } from '../observability/tagged-logger';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { isTransientDatabaseError } from '../common/transient-database-error';
import { errorColumns, terminalTransition } from '../scheduling/execution-transitions';
import { SignalRendezvous } from '../signals/signal-rendezvous';
import type { PreparedStep } from './prepared-step.interface';
import { WorkflowScheduler } from '../scheduling/workflow-scheduler';
import { WakeSnapshots, type WakeSnapshot } from '../signals/wake-snapshots';
import {
  WorkflowRepository,
  type GuessedStepRows,
  type StepReadAhead,
  type RepositoryTransaction,
  type SchemaFeatures,
} from '../ports/workflow.repository';

/** The optional migrations a step needs, by what it uses. */
const REQUIRED_MIGRATIONS: ReadonlyArray<{
  feature: keyof SchemaFeatures;
  migration: string;
  because: string;
  applies: (step: StepDefinition) => boolean;
}> = [
  {
    feature: 'resumable',
    migration: 'resumable-steps',
    because: 'is a @ResumableStep',
    applies: (step) => step.kind === 'resumable',
  },
  {
    feature: 'signals',
    migration: 'signals',
    because: 'uses waitFor',
    applies: (step) => step.waitFor !== null,
  },
  {
    feature: 'waitTimeouts',
    migration: 'signal-timeouts (GenevaDriveSignalTimeouts1764400005000)',
    because: 'has a timeout',
    applies: (step) => step.timeoutMs !== null,
  },
];

/** Stands in for a hero the prepare's message reads, until its commit hands over the row. */
const HERO_READ_AFTER_COMMIT: object = Object.freeze({});

/** The prepare phase's verdict. */
export type Preparation =
  { kind: 'run'; prepared: PreparedStep } | { kind: 'stop'; raise: Error | null };

/**
 * Wraps an exception thrown by a `@CancelIf` method, `skipIf` or a gate matcher, so the runner
 * handles it like a body exception (reason `precondition`).
 */
export class PreconditionFailure extends Error {
  override readonly name = 'PreconditionFailure';

  constructor(readonly error: unknown) {
    super('A precondition threw');
  }
}

/**
 * Phase 1, under the workflow row lock then the execution row lock: the guards (duplicate job,
 * workflow not runnable, unknown class, missing hero, undefined or removed step), the
 * preconditions, and the start of the execution.
 */
@Injectable()
export class StepPreparer {
  private readonly baseLogger: Logger;

  constructor(
    private readonly registry: WorkflowRegistry,
    private readonly repository: WorkflowRepository,
    private readonly scheduler: WorkflowScheduler,
    private readonly rendezvous: SignalRendezvous,
    private readonly wakeSnapshots: WakeSnapshots,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {
    this.baseLogger = new Logger('GenevaDrive');
  }

  /** Tagged with the workflow and execution tags, and the workflow's context keys if any. */
  loggerFor(workflow: WorkflowEntity, execution: StepExecutionEntity): TaggedLogger {
    const heroTag = workflow.heroId
      ? ` hero_type=${workflow.heroType} hero_id=${workflow.heroId}`
      : '';
    const tags = [
      `${workflow.type} id=${workflow.id}${heroTag}`,
      `execution_id=${execution.id} step_name=${execution.stepName}`,
    ];
    const context = contextTag(workflow.context);
    if (context) tags.push(context);
    return new TaggedLogger(this.options.logger ?? this.baseLogger, tags);
  }

  /**
   * Locks the workflow and execution rows, then `prepareLocked`; `missing` when either row is not
   * there. `readAhead`, the job's hints (its workflow's hero, its pinned signal), lets the
   * locks' round trip read those too.
   */
  async prepare(
    uow: RepositoryTransaction,
    workflowId: string,
    executionId: string,
    readAhead: StepReadAhead = {},
  ): Promise<Preparation | { kind: 'missing' }> {
    const guessed = this.lockAsWokenHere(uow, workflowId, executionId, readAhead);
    if (guessed) return this.prepareGuessed(uow, guessed);
    const { workflow, execution } = await this.repository.lockForStep(
      uow,
      workflowId,
      executionId,
      readAhead,
    );
    if (!workflow || !execution || execution.workflowId !== workflow.id) return { kind: 'missing' };
    return this.prepareLocked(uow, workflow, execution);
  }

  /**
   * The rows of an execution a signal delivery of this process woke, as it left them, when its
   * prepare decides the same whatever else it could read (see `preparedWithoutReading`): the
   * locks, the hero's read and a fence then go with the writes and the COMMIT in one message
   * (`lockForStepAsLeft`). Null otherwise, and on the run after a broken fence (the snapshot is
   * handed out once).
   */
  private lockAsWokenHere(
    uow: RepositoryTransaction,
    workflowId: string,
    executionId: string,
    readAhead: StepReadAhead,
  ): GuessedStepRows | null {
    const snapshot = this.wakeSnapshots.take(executionId);
    if (!snapshot || !this.preparedWithoutReading(snapshot, workflowId, readAhead)) return null;
    const { workflow, execution, signal } = snapshot;
    // The hero is read in the message; until the commit nothing of the prepare looks at it.
    const hero = workflow.heroType && workflow.heroId ? HERO_READ_AFTER_COMMIT : null;
    return this.repository.lockForStepAsLeft(uow, { workflow, execution, hero, signal }, readAhead);
  }

  /**
   * `prepareLocked` on guessed rows: its events, and the hero read under the locks, once the
   * guess committed (a broken fence runs the prepare again, reading first).
   */
  private async prepareGuessed(
    uow: RepositoryTransaction,
    guessed: GuessedStepRows,
  ): Promise<Preparation> {
    const events: Array<() => void> = [];
    const preparation = await this.prepareLocked(uow, guessed.workflow, guessed.execution, events);
    uow.afterCommit(() => {
      if (preparation.kind === 'run') preparation.prepared.hero = guessed.heroAfterCommit();
      events.forEach((publish) => publish());
    });
    return preparation;
  }

  /**
   * Whether a woken execution's prepare, when its rows are as the wake left them, runs its step
   * whatever else it could read: a plain step of a registered class whose optional migrations
   * have run, no `@CancelIf`, no `skipIf` function, its gate passed by the pinned signal, and the
   * job naming the workflow's hero (so the message reads it).
   */
  private preparedWithoutReading(
    { workflow, execution, signal }: WakeSnapshot,
    workflowId: string,
    readAhead: StepReadAhead,
  ): boolean {
    const definition = this.registry.findByName(workflow.type);
    const step = definition?.steps.named(execution.stepName);
    if (!definition || !step || step.kind !== 'step') return false;
    const features = this.repository.features;
    const hero = readAhead.hero;
    return (
      workflow.id === workflowId &&
      execution.workflowId === workflowId &&
      execution.state === 'scheduled' &&
      (workflow.state === 'ready' || workflow.state === 'performing') &&
      definition.cancelIfMethods.length === 0 &&
      (step.skipIf === null || step.skipIf === false) &&
      (step.waitFor === null || execution.signalId === signal.id) &&
      REQUIRED_MIGRATIONS.every(
        (required) => !required.applies(step) || features[required.feature],
      ) &&
      (!workflow.heroType ||
        !workflow.heroId ||
        (hero?.heroType === workflow.heroType && hero.heroId === workflow.heroId))
    );
  }

  /**
   * The guards and preconditions of an execution whose workflow row this unit of work has locked.
   * A step chained in process passes `deferredEvents`: its precondition event is published after
   * the previous step's finalize event, in the order a subscriber expects.
   */
  async prepareLocked(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    execution: StepExecutionEntity,
    deferredEvents: Array<() => void> | null = null,
  ): Promise<Preparation> {
    const publish = (event: () => void) => (deferredEvents ? deferredEvents.push(event) : event());
    const logger = this.loggerFor(workflow, execution);

    if (execution.state !== 'scheduled') {
      logger.log(`Execution already ${execution.state}, skipping duplicate job`);
      return { kind: 'stop', raise: null };
    }
    if (workflow.state !== 'ready' && workflow.state !== 'performing') {
      await this.repository.updateExecution(
        uow,
        execution,
        terminalTransition('canceled', 'canceled'),
      );
      return { kind: 'stop', raise: null };
    }
    const definition = this.registry.findByName(workflow.type);
    if (!definition) {
      const error = new StepConfigurationError(
        `No workflow registered as '${workflow.type}': its class was renamed or removed. Register a class under that name (@Workflow({ name: '${workflow.type}' })) or cancel the workflow.`,
      );
      await this.failAndPause(uow, workflow, execution, error);
      return { kind: 'stop', raise: error };
    }

    const hero = await this.loadHero(uow, workflow);
    if (hero === null && !definition.mayProceedWithoutHero) {
      logger.log('Hero is missing, canceling the workflow');
      await this.repository.updateExecution(
        uow,
        execution,
        terminalTransition('canceled', 'canceled'),
      );
      await this.repository.updateWorkflow(uow, workflow, {
        state: 'canceled',
        transitionedAt: new Date(),
      });
      return { kind: 'stop', raise: null };
    }

    const step = definition.steps.named(execution.stepName);
    if (!step) {
      const error = new StepNotDefinedError(
        `Step '${execution.stepName}' is not defined in ${definition.target.name}. ` +
          `Available steps: ${definition.steps.runnable.map((s) => s.name).join(', ') || '(none)'}. ` +
          `Use resumeAt() to continue at another step, or declare @RemovedStep('${execution.stepName}') where the step used to be.`,
        { stepExecution: execution, workflow },
      );
      await this.failAndPause(uow, workflow, execution, error);
      return { kind: 'stop', raise: error };
    }
    if (step.kind === 'removed') {
      await this.repository.updateExecution(
        uow,
        execution,
        terminalTransition('skipped', 'skipped'),
      );
      await this.rendezvous.settle(uow, execution.signalId, [step.name]);
      await this.repository.updateWorkflow(uow, workflow, {
        state: 'ready',
        currentStepName: null,
        nextStepName: step.name,
      });
      await this.scheduler.scheduleNextStep(uow, workflow, definition);
      return { kind: 'stop', raise: null };
    }

    const missing = await this.missingMigration(definition, step);
    if (missing) {
      await this.failAndPause(uow, workflow, execution, missing);
      return { kind: 'stop', raise: missing };
    }

    const verdict = await this.checkPreconditions(definition, step, { workflow, hero }).catch(
      (failure: unknown) => {
        publish(() =>
          publishPrecondition(
            { workflow, execution, step },
            'exception',
            (failure as PreconditionFailure).error,
          ),
        );
        throw failure;
      },
    );
    publish(() => publishPrecondition({ workflow, execution, step }, verdict));
    if (verdict === 'cancel') {
      await this.repository.updateExecution(
        uow,
        execution,
        terminalTransition('canceled', 'canceled'),
      );
      await this.repository.updateWorkflow(uow, workflow, {
        state: 'canceled',
        transitionedAt: new Date(),
      });
      return { kind: 'stop', raise: null };
    }
    if (verdict === 'skip') {
      await this.repository.updateExecution(
        uow,
        execution,
        terminalTransition('skipped', 'skipped'),
      );
      await this.rendezvous.settle(uow, execution.signalId, [step.name]);
      await this.repository.updateWorkflow(uow, workflow, {
        state: 'ready',
        currentStepName: null,
        nextStepName: step.name,
      });
      await this.scheduler.scheduleNextStep(uow, workflow, definition);
      return { kind: 'stop', raise: null };
    }

    let receivedSignal: SignalEntity | null = null;
    if (step.waitFor) {
      receivedSignal = await this.passGate(uow, step, execution, { workflow, hero });
      if (!receivedSignal) {
        const waitingSince = new Date();
        await this.repository.updateExecution(uow, execution, {
          state: 'waiting',
          waitingSince,
          ...(step.timeoutMs === null
            ? {}
            : { waitDeadlineAt: new Date(waitingSince.getTime() + step.timeoutMs) }),
        });
        if (step.timeoutMs !== null)
          await this.scheduler.armWaitTimeout(uow, workflow, definition, execution);
        const parked = () => publishPark({ workflow, execution, step });
        // Chained: out after the previous step's finalize event; else once this commit is in.
        if (deferredEvents) deferredEvents.push(parked);
        else uow.afterCommit(parked);
        logger.log(
          `Parked, waiting for a signal (${describeMatcher(step)})` +
            (execution.waitDeadlineAt ? ` until ${execution.waitDeadlineAt.toISOString()}` : ''),
        );
        return { kind: 'stop', raise: null };
      }
    }

    const now = new Date();
    await this.repository.updateExecution(uow, execution, { state: 'in_progress', startedAt: now });
    await this.repository.updateWorkflow(uow, workflow, {
      state: 'performing',
      currentStepName: step.name,
    });
    return {
      kind: 'run',
      prepared: { workflow, execution, definition, step, hero, receivedSignal, logger },
    };
  }

  private async loadHero(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
  ): Promise<object | null> {
    if (!workflow.heroType || !workflow.heroId) return null;
    return this.repository.loadHero(uow, workflow.heroType, workflow.heroId);
  }

  /** Runs cancel conditions then `skipIf`; a throw becomes a `PreconditionFailure`. */
  private async checkPreconditions(
    definition: WorkflowDefinition,
    step: StepDefinition,
    ctx: WorkflowContext,
  ): Promise<'pass' | 'cancel' | 'skip'> {
    const instance = definition.instance as Record<string, (c: WorkflowContext) => unknown>;
    try {
      for (const method of definition.cancelIfMethods) {
        if (await instance[method].call(instance, ctx)) return 'cancel';
      }
      const { skipIf } = step;
      if (skipIf === null || skipIf === false) return 'pass';
      if (skipIf === true) return 'skip';
      const skip =
        typeof skipIf === 'string'
          ? await instance[skipIf].call(instance, ctx)
          : await skipIf.call(instance, ctx);
      return skip ? 'skip' : 'pass';
    } catch (error) {
      throw new PreconditionFailure(error);
    }
  }

  /**
   * A resumable, `waitFor` or `timeout` step whose migration has not run (checked again before
   * failing).
   */
  private async missingMigration(
    definition: WorkflowDefinition,
    step: StepDefinition,
  ): Promise<MissingMigrationError | null> {
    const needs = REQUIRED_MIGRATIONS.filter((required) => required.applies(step));
    let features = this.repository.features;
    if (needs.every(({ feature }) => features[feature])) return null;
    features = await this.repository.refreshSchemaFeatures();
    const missing = needs.find(({ feature }) => !features[feature]);
    if (!missing) return null;
    return new MissingMigrationError(
      `Step '${step.name}' of ${definition.name} ${missing.because}, but the ${missing.migration} migration has not run: ` +
        'add GENEVA_DRIVE_MIGRATIONS to your DataSource migrations and run them, then resume the workflow.',
    );
  }

  /** A matcher that throws at the gate is handled like a precondition exception. */
  private async passGate(
    uow: RepositoryTransaction,
    step: StepDefinition,
    execution: StepExecutionEntity,
    ctx: WorkflowContext,
  ): Promise<SignalEntity | null> {
    try {
      return await this.rendezvous.gate(uow, step, execution, ctx);
    } catch (error) {
      // A lost connection while claiming the signal is no fault of the matcher.
      if (isTransientDatabaseError(error)) throw error;
      throw new PreconditionFailure(error);
    }
  }

  private async failAndPause(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    execution: StepExecutionEntity,
    error: Error,
  ): Promise<void> {
    await this.repository.updateExecution(uow, execution, {
      ...terminalTransition('failed', 'failed'),
      ...errorColumns(error),
    });
    await this.repository.updateWorkflow(uow, workflow, {
      state: 'paused',
      transitionedAt: new Date(),
      currentStepName: null,
    });
  }
}

/** The awaited signal's name; null for a matcher that has none. */
export function signalNameOf(step: StepDefinition): string | null {
  const name = (step.waitFor as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? name : null;
}

/** The awaited signal, for logs and test-helper messages. */
export function describeMatcher(step: StepDefinition): string {
  return signalNameOf(step) ?? 'custom matcher';
}

/** `key=value` for each context entry (strings as they are, other values as JSON), or null. */
function contextTag(context: Record<string, unknown> | null | undefined): string | null {
  if (!context) return null;
  const entries = Object.entries(context);
  if (entries.length === 0) return null;
  return entries
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
}
