import { Injectable } from '@nestjs/common';
import type { StepDefinition } from '../discovery/step-definition.interface';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import type { SignalEntity } from '../entities/signal.entity';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import type { WorkflowContext } from '../interfaces/workflow-context.interface';
import { matcherReadsContext } from '../api/signal-matcher';
import { WorkflowScheduler } from '../scheduling/workflow-scheduler';
import { WorkflowRepository, type RepositoryTransaction } from '../ports/workflow.repository';

const CLEAN_OUTCOMES = ['success', 'skipped'];
const ACTIVE_STATES = ['waiting', 'scheduled', 'in_progress'];

/**
 * Both sides of the signal rendezvous, always under the workflow row lock: a `waitFor` step's gate
 * (claim the oldest matching signal, or park), a delivery waking parked executions, and the
 * settlement of a signal once every chain attached to it has resolved.
 */
@Injectable()
export class SignalRendezvous {
  constructor(
    private readonly repository: WorkflowRepository,
    private readonly scheduler: WorkflowScheduler,
  ) {}

  /**
   * The gate: the pinned signal, or the oldest attachable one the step's matcher accepts (claimed
   * and pinned here). Null means no signal yet: the caller parks the execution.
   */
  async gate(
    uow: RepositoryTransaction,
    step: StepDefinition,
    execution: StepExecutionEntity,
    ctx: WorkflowContext,
  ): Promise<SignalEntity | null> {
    if (execution.signalId) {
      const pinned = await this.repository.findSignal(uow, execution.signalId);
      if (pinned) return pinned;
    }
    const signal = await this.firstMatching(uow, step, execution.workflowId, ctx);
    if (!signal) return null;
    await this.claim(uow, signal);
    await this.repository.updateExecution(uow, execution, { signalId: signal.id });
    return signal;
  }

  /**
   * A delivery: wakes every parked execution (`waiting`, read under the workflow lock, oldest
   * first) whose matcher accepts the signal. The context (the hero's read) is loaded once, and only
   * when a matcher of a parked step may read it.
   */
  async wakeMatching(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    definition: WorkflowDefinition,
    signal: SignalEntity,
    waiting: readonly StepExecutionEntity[],
    loadContext: () => Promise<WorkflowContext>,
  ): Promise<void> {
    const parked = waiting.flatMap((execution) => {
      const matcher = definition.steps.named(execution.stepName)?.waitFor;
      return matcher ? [{ execution, matcher }] : [];
    });
    const ctx = parked.some(({ matcher }) => matcherReadsContext(matcher))
      ? await loadContext()
      : { workflow, hero: null };
    for (const { execution, matcher } of parked) {
      if (!matcher.matches(signal, ctx)) continue;
      await this.claim(uow, signal);
      await this.wake(uow, workflow, definition, execution, signal);
    }
  }

  /** `resume()` of a workflow whose current execution is parked: the rendezvous runs again. */
  async retryParked(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    definition: WorkflowDefinition,
    execution: StepExecutionEntity,
    ctx: WorkflowContext,
  ): Promise<void> {
    const step = definition.steps.named(execution.stepName);
    if (!step) return;
    const signal = await this.firstMatching(uow, step, workflow.id, ctx);
    if (!signal) return;
    await this.claim(uow, signal);
    await this.wake(uow, workflow, definition, execution, signal);
  }

  /**
   * A clean resolution of a chain attached to the signal: `consumed` goes up, and the signal is
   * consumed once every attached chain's latest execution ended cleanly. Steps in
   * `resolvedByDecree` (skipped ones) count as resolved whatever their executions say.
   */
  async settle(
    uow: RepositoryTransaction,
    signalId: string | null,
    resolvedByDecree: string[] = [],
  ): Promise<void> {
    if (!signalId) return;
    const signal = await this.repository.findSignal(uow, signalId);
    if (!signal) return;
    const changes: Partial<SignalEntity> = { consumed: signal.consumed + 1 };
    if (signal.state === 'claimed' && (await this.fullyResolved(uow, signal, resolvedByDecree))) {
      Object.assign(changes, { state: 'consumed', consumedAt: new Date() });
    }
    await this.repository.updateSignal(uow, signal, changes);
  }

  private async fullyResolved(
    uow: RepositoryTransaction,
    signal: SignalEntity,
    resolvedByDecree: string[],
  ): Promise<boolean> {
    const attached = (await this.repository.attachedExecutions(uow, signal.id)).filter(
      (execution) => !resolvedByDecree.includes(execution.stepName),
    );
    if (attached.some((execution) => ACTIVE_STATES.includes(execution.state))) return false;
    const latestByStep = new Map<string, StepExecutionEntity>();
    for (const execution of attached) latestByStep.set(execution.stepName, execution);
    return [...latestByStep.values()].every((execution) =>
      CLEAN_OUTCOMES.includes(execution.outcome ?? ''),
    );
  }

  private async firstMatching(
    uow: RepositoryTransaction,
    step: StepDefinition,
    workflowId: string,
    ctx: WorkflowContext,
  ): Promise<SignalEntity | null> {
    if (!step.waitFor) return null;
    for (const signal of await this.repository.attachableSignals(uow, workflowId)) {
      if (step.waitFor.matches(signal, ctx)) return signal;
    }
    return null;
  }

  private async claim(uow: RepositoryTransaction, signal: SignalEntity): Promise<void> {
    await this.repository.updateSignal(uow, signal, {
      claimed: signal.claimed + 1,
      state: signal.state === 'pending' ? 'claimed' : signal.state,
      claimedAt: signal.claimedAt ?? new Date(),
    });
  }

  private async wake(
    uow: RepositoryTransaction,
    workflow: WorkflowEntity,
    definition: WorkflowDefinition,
    execution: StepExecutionEntity,
    signal: SignalEntity,
  ): Promise<void> {
    await this.scheduler.reenqueueExecution(uow, workflow, definition, execution, {
      state: 'scheduled',
      signalId: signal.id,
      scheduledFor: new Date(),
      waitingSince: null,
    });
  }
}
