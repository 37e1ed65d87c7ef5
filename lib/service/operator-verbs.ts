import { Injectable } from '@nestjs/common';
import { describeValue } from '../common/input-guards';
import { validateStepJobOptions } from '../common/step-job-options.validator';
import {
  LOCK_CONFLICT_RETRY_DELAYS_MS,
  retryLockConflicts,
} from '../common/transient-database-error';
import { isUuid } from '../common/uuid';
import { workflowIdOf, workflowNotFound } from '../common/workflow-like';
import { WorkflowRegistry } from '../discovery/workflow.registry';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { InvalidStateError } from '../errors/invalid-state.error';
import { StepConfigurationError } from '../errors/step-configuration.error';
import { StepNotDefinedError } from '../errors/step-not-defined.error';
import type { StepJobOptions } from '../interfaces/job-options.interface';
import type { WorkflowLike } from '../interfaces/workflow-service.interface';
import { terminalTransition } from '../scheduling/execution-transitions';
import { WorkflowScheduler } from '../scheduling/workflow-scheduler';
import { SignalRendezvous } from '../signals/signal-rendezvous';
import { WorkflowRepository, type RepositoryTransaction } from '../ports/workflow.repository';

/**
 * The operator verbs behind `WorkflowService`: pause, resume, resumeAt, skip, cancel and
 * setStepJobOptions. Each runs in one transaction under the workflow row lock and checks the
 * workflow's state there, so a verb never acts on a state that changed since the caller looked.
 */
@Injectable()
export class OperatorVerbs {
  constructor(
    private readonly registry: WorkflowRegistry,
    private readonly repository: WorkflowRepository,
    private readonly scheduler: WorkflowScheduler,
    private readonly rendezvous: SignalRendezvous,
  ) {}

  /** Pauses a ready workflow now, or a performing one at the step boundary. */
  pause(workflow: WorkflowLike): Promise<WorkflowEntity> {
    return this.steer(workflow, 'pause()', async (_uow, locked) => {
      if (locked.state !== 'ready' && locked.state !== 'performing') {
        throw new InvalidStateError(
          `Cannot pause a ${locked.state} workflow (only ready or performing ones).`,
        );
      }
      await this.repository.updateWorkflow(_uow, locked, {
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
      const current = await this.repository.currentExecution(uow, locked.id);
      if (current?.state === 'in_progress') {
        await this.repository.updateWorkflow(uow, locked, {
          state: 'performing',
          transitionedAt: null,
        });
        return;
      }
      if (current) {
        await this.repository.updateWorkflow(uow, locked, { state: 'ready', transitionedAt: null });
        const currentStep = definition.steps.named(current.stepName);
        if (current.state === 'waiting' && currentStep?.kind === 'removed') {
          await this.repository.updateExecution(
            uow,
            current,
            terminalTransition('skipped', 'skipped'),
          );
          await this.rendezvous.settle(uow, current.signalId, [current.stepName]);
          await this.repository.updateWorkflow(uow, locked, {
            currentStepName: null,
            nextStepName: current.stepName,
          });
          await this.scheduler.scheduleNextStep(uow, locked, definition);
        } else if (current.state === 'waiting') {
          await this.rendezvous.retryParked(uow, locked, definition, current, {
            workflow: locked,
            hero: await this.loadHero(uow, locked),
          });
          // Its timer fired (and did nothing) while paused, or is still ahead: armed again, so
          // the wait keeps its deadline; one already passed fires now.
          if (current.state === 'waiting' && current.waitDeadlineAt)
            await this.scheduler.armWaitTimeout(uow, locked, definition, current);
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
      await this.repository.updateWorkflow(uow, locked, {
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
    uow: RepositoryTransaction,
    workflowId: string,
    stepName: string,
  ): Promise<StepExecutionEntity | null> {
    if (!this.repository.features.resumable) return null;
    const [latest] = await this.repository.executionsOfStep(uow, workflowId, stepName);
    if (!latest) return null;
    const stopped =
      latest.outcome === 'workflow_paused' || (latest.state === 'failed' && latest.cursor !== null);
    if (!stopped) return null;
    const successor = await this.repository.successorOf(uow, latest.id);
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
      await this.repository.updateWorkflow(uow, locked, {
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
        const current = await this.repository.currentExecution(uow, locked.id);
        if (current) {
          await this.repository.updateExecution(
            uow,
            current,
            terminalTransition('skipped', 'skipped'),
          );
          await this.rendezvous.settle(uow, current.signalId, [current.stepName]);
          reference = current.stepName;
        }
      } else if (reference !== null) {
        // The paused workflow's failed step: its claimed signal is settled by the skip.
        const [latest] = await this.repository.executionsOfStep(uow, locked.id, reference);
        if (latest?.signalId) await this.rendezvous.settle(uow, latest.signalId, [reference]);
      }
      await this.repository.updateWorkflow(uow, locked, {
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
      const current = await this.repository.currentExecution(uow, locked.id);
      if (current && current.state !== 'in_progress') {
        await this.repository.updateExecution(
          uow,
          current,
          terminalTransition('canceled', 'canceled'),
        );
      }
      await this.repository.updateWorkflow(uow, locked, {
        state: 'canceled',
        transitionedAt: new Date(),
      });
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
      await this.repository.updateWorkflow(uow, locked, {
        metadata: Object.keys(metadata).length > 0 ? metadata : null,
      });
    });
  }

  /** Locks the workflow, runs an operator verb on it, and resolves to the reloaded row. */
  private async steer(
    workflow: WorkflowLike,
    method: string,
    verb: (
      uow: RepositoryTransaction,
      locked: WorkflowEntity,
      definition: WorkflowDefinition,
    ) => Promise<void>,
  ): Promise<WorkflowEntity> {
    const id = workflowIdOf(workflow, method);
    if (!isUuid(id)) throw workflowNotFound(id);
    return retryLockConflicts(
      () =>
        this.repository.transaction(async (uow) => {
          const locked = await this.repository.lockWorkflow(uow, id);
          if (!locked) throw workflowNotFound(id);
          await verb(uow, locked, this.registry.resolve(locked.type));
          return locked;
        }),
      LOCK_CONFLICT_RETRY_DELAYS_MS,
    );
  }

  private async loadHero(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
  ): Promise<object | null> {
    if (!workflow.heroType || !workflow.heroId) return null;
    return this.repository.loadHero(uow, workflow.heroType, workflow.heroId);
  }
}

function runnableNames(definition: WorkflowDefinition): string {
  return definition.steps.runnable.map((step) => step.name).join(', ') || '(none)';
}
