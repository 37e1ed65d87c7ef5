import { Injectable } from '@nestjs/common';
import { parseDuration } from '../common/duration';
import type { StepDefinition } from '../discovery/step-definition.interface';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import type { StepJobOptions } from '../interfaces/job-options.interface';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { nextJobId, waitTimeoutJobId } from '../queue/job-id';
import type { StepChain } from '../runner/step-chain';
import {
  WorkflowRepository,
  type RepositoryTransaction,
  type WokenExecution,
} from '../ports/workflow.repository';

/** An execution `scheduleNextStep` created: enqueued, or handed to the worker's step chain. */
export interface ScheduledStep {
  execution: StepExecutionEntity;
  inProcess: boolean;
}

/** Extra fields of a new execution (resumable successors, reattempt bookkeeping). */
export interface NewExecutionExtras {
  metadata?: Record<string, unknown> | null;
  cursor?: unknown;
  continuesFromId?: string | null;
  signalId?: string | null;
}

/**
 * Creates step executions and their jobs, always under the workflow row lock held by the caller's
 * unit of work: the stray sweep, the insert, `next_step_name`, and the enqueue happen together.
 */
@Injectable()
export class WorkflowScheduler {
  constructor(
    private readonly repository: WorkflowRepository,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  /**
   * Schedules the step after `current_step_name ?? next_step_name`, or finishes the workflow when
   * none is left. `waitMs` overrides the next step's own wait.
   */
  async scheduleNextStep(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    definition: WorkflowDefinition,
    chain: StepChain | null = null,
  ): Promise<ScheduledStep | null> {
    const reference = workflow.currentStepName ?? workflow.nextStepName;
    const next = definition.steps.nextAfter(reference);
    if (!next) {
      await this.finishWorkflow(uow, workflow);
      return null;
    }
    const { execution, jobOptions } = await this.insertExecution(
      uow,
      workflow,
      definition,
      next,
      next.waitMs,
    );
    if (chain?.claim(next, jobOptions, this.options.defaultQueue, execution.scheduledFor)) {
      return { execution, inProcess: true };
    }
    await this.enqueue(uow, workflow, execution, jobOptions, execution.id);
    return { execution, inProcess: false };
  }

  /** Enqueues the first job of an execution `scheduleNextStep` handed to a chain that could not run it. */
  async enqueueNew(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    definition: WorkflowDefinition,
    step: StepDefinition,
    execution: StepExecutionEntity,
  ): Promise<void> {
    await this.enqueue(
      uow,
      workflow,
      execution,
      this.mergedJobOptions(definition, workflow, step),
      execution.id,
    );
  }

  /** The workflow ends: `finished`, with current and next step names cleared. */
  async finishWorkflow(uow: RepositoryTransaction, workflow: WorkflowEntity): Promise<void> {
    await this.repository.updateWorkflow(uow, workflow, {
      state: 'finished',
      transitionedAt: new Date(),
      currentStepName: null,
      nextStepName: null,
    });
  }

  /**
   * Sweeps stray scheduled/waiting executions, inserts a scheduled execution for `step`, points
   * `next_step_name` at it, and enqueues its job. `waitMs` is the wait the enqueue carries (a step
   * wait, a reattempt wait); when null, job-option `wait`/`waitUntil` decide the due time.
   */
  async createExecution(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    definition: WorkflowDefinition,
    step: StepDefinition,
    waitMs: number | null,
    extras: NewExecutionExtras = {},
  ): Promise<StepExecutionEntity> {
    const { execution, jobOptions } = await this.insertExecution(
      uow,
      workflow,
      definition,
      step,
      waitMs,
      extras,
    );
    await this.enqueue(uow, workflow, execution, jobOptions, execution.id);
    return execution;
  }

  /**
   * `createExecution` for new workflows of a bulk start (SPEC §16.7), already inserted with
   * `next_step_name` at `step`: no stray to sweep, the executions in one multi-row write, and one
   * job each (flushed together after commit). Resolves the executions in input order.
   */
  async createExecutions(
    uow: RepositoryTransaction,
    workflows: readonly WorkflowEntity[],
    definition: WorkflowDefinition,
    step: StepDefinition,
    waitMs: number | null,
  ): Promise<StepExecutionEntity[]> {
    if (workflows.length === 0) return [];
    const jobOptions = workflows.map((workflow) =>
      this.mergedJobOptions(definition, workflow, step),
    );
    const executions = await this.repository.insertExecutions(
      uow,
      workflows.map((workflow, index) => ({
        workflowId: workflow.id,
        stepName: step.name,
        scheduledFor: this.dueTime(waitMs, jobOptions[index]),
      })),
    );
    for (const [index, execution] of executions.entries()) {
      await this.enqueue(uow, workflows[index], execution, jobOptions[index], execution.id);
    }
    return executions;
  }

  /** `createExecution` without the enqueue. */
  private async insertExecution(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    definition: WorkflowDefinition,
    step: StepDefinition,
    waitMs: number | null,
    extras: NewExecutionExtras = {},
  ): Promise<{ execution: StepExecutionEntity; jobOptions: StepJobOptions }> {
    await this.repository.sweepStrayExecutions(uow, workflow.id);
    const jobOptions = this.mergedJobOptions(definition, workflow, step);
    const scheduledFor = this.dueTime(waitMs, jobOptions);
    const execution = await this.repository.insertExecution(uow, {
      workflowId: workflow.id,
      stepName: step.name,
      scheduledFor,
      ...extras,
    });
    await this.repository.updateWorkflow(uow, workflow, { nextStepName: step.name });
    return { execution, jobOptions };
  }

  /**
   * The next execution of a resumable chain: same step, the predecessor's cursor (unless
   * rewound) and signal pin, linked by `continues_from_id`.
   */
  createSuccessor(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    definition: WorkflowDefinition,
    step: StepDefinition,
    predecessor: StepExecutionEntity,
    waitMs: number | null,
    options: { rewind?: boolean; metadata?: Record<string, unknown> } = {},
  ): Promise<StepExecutionEntity> {
    return this.createExecution(uow, workflow, definition, step, waitMs, {
      cursor: options.rewind ? null : predecessor.cursor,
      continuesFromId: predecessor.id,
      signalId: predecessor.signalId,
      metadata: options.metadata ?? null,
    });
  }

  /**
   * Enqueues an existing scheduled execution again (operator resume, recovery) under a fresh job
   * id, keeping its `scheduled_for`: a future time is a delay, an overdue one runs now. `changes`
   * are written in the same UPDATE as the new job id.
   */
  async reenqueueExecution(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    definition: WorkflowDefinition,
    execution: StepExecutionEntity,
    changes: Partial<
      Pick<StepExecutionEntity, 'metadata' | 'state' | 'signalId' | 'scheduledFor' | 'waitingSince'>
    > = {},
  ): Promise<void> {
    const jobId = nextJobId(execution.id, execution.jobId);
    await this.repository.updateExecution(uow, execution, { ...changes, jobId });
    await this.enqueue(
      uow,
      workflow,
      execution,
      this.executionJobOptions(definition, workflow, execution),
      jobId,
    );
  }

  /**
   * Enqueues the job of an execution whose row a signal delivery has already woken: `scheduled`,
   * with its next job id written (`deliverSignalAtOnce`).
   */
  async enqueueWoken(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    definition: WorkflowDefinition,
    execution: WokenExecution,
  ): Promise<void> {
    const jobOptions = this.executionJobOptions(definition, workflow, execution);
    await this.enqueue(uow, workflow, execution, jobOptions, execution.jobId);
  }

  private executionJobOptions(
    definition: WorkflowDefinition,
    workflow: WorkflowEntity,
    execution: Pick<StepExecutionEntity, 'stepName'>,
  ): StepJobOptions {
    const step = definition.steps.named(execution.stepName);
    return step
      ? this.mergedJobOptions(definition, workflow, step)
      : this.baseJobOptions(definition, workflow);
  }

  /**
   * Enqueues the delayed job that fires a parked execution's timeout at `wait_deadline_at` (now,
   * when that has passed). The job only acts on an execution still waiting past its deadline, so
   * a signal that comes first needs nothing removed.
   */
  async armWaitTimeout(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    definition: WorkflowDefinition,
    execution: StepExecutionEntity,
  ): Promise<void> {
    const step = definition.steps.named(execution.stepName);
    if (!execution.waitDeadlineAt || !step) return;
    const jobOptions = this.mergedJobOptions(definition, workflow, step);
    const now = new Date();
    await uow.enqueue({
      jobId: waitTimeoutJobId(execution.id, now),
      kind: 'expireWait',
      stepExecutionId: execution.id,
      workflowId: execution.workflowId,
      queue: jobOptions.queue ?? this.options.defaultQueue,
      delay: Math.max(0, execution.waitDeadlineAt.getTime() - now.getTime()),
    });
  }

  /** Class < instance (workflow metadata) < step job options. */
  mergedJobOptions(
    definition: WorkflowDefinition,
    workflow: WorkflowEntity,
    step: StepDefinition,
  ): StepJobOptions {
    return { ...this.baseJobOptions(definition, workflow), ...step.jobOptions };
  }

  private baseJobOptions(definition: WorkflowDefinition, workflow: WorkflowEntity): StepJobOptions {
    const stored = (workflow.metadata?.stepJobOptions ?? {}) as Record<string, unknown>;
    const instance: StepJobOptions = { ...stored };
    if (typeof stored.waitUntil === 'string') instance.waitUntil = new Date(stored.waitUntil);
    return { ...definition.stepJobOptions, ...instance };
  }

  private dueTime(waitMs: number | null, jobOptions: StepJobOptions): Date {
    const now = Date.now();
    if (waitMs !== null) return new Date(now + waitMs);
    if (jobOptions.waitUntil) return new Date(Math.max(now, jobOptions.waitUntil.getTime()));
    if (jobOptions.wait !== undefined)
      return new Date(now + parseDuration(jobOptions.wait, 'job option wait'));
    return new Date(now);
  }

  private async enqueue(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    execution: Pick<StepExecutionEntity, 'id' | 'workflowId' | 'signalId' | 'scheduledFor'>,
    jobOptions: StepJobOptions,
    jobId: string,
  ): Promise<void> {
    await uow.enqueue({
      jobId,
      stepExecutionId: execution.id,
      workflowId: execution.workflowId,
      ...(workflow.heroType && workflow.heroId
        ? { heroType: workflow.heroType, heroId: workflow.heroId }
        : {}),
      ...(execution.signalId ? { signalId: execution.signalId } : {}),
      queue: jobOptions.queue ?? this.options.defaultQueue,
      priority: jobOptions.priority,
      delay: Math.max(0, Math.round(execution.scheduledFor.getTime() - Date.now())),
    });
  }
}
