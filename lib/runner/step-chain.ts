import type { StepDefinition } from '../discovery/step-definition.interface';
import type { StepJobOptions } from '../interfaces/job-options.interface';
import type { ShutdownSignal } from '../resumable/shutdown.signal';

/** The queue and priority of the BullMQ job a worker is running. */
export interface JobSlot {
  queue: string;
  priority: number | undefined;
}

/** Limits on running a workflow's following steps in process. */
export interface StepChainLimits {
  /** Steps run in process after the job's own step; 0 turns chaining off. */
  maxSteps: number;
  /** Time after which the job's slot goes back to the queue. */
  maxDurationMs: number;
}

/**
 * Lets a worker run a workflow's next step right after the previous one, in the same job: no
 * queue hop, one commit between the two steps. Only a step that is due now, runs on the job's
 * queue with the job's priority and waits for no signal qualifies, and only within the limits
 * (steps and time, so one workflow cannot hog a worker slot) and while the process is not
 * shutting down. Anything else is enqueued as usual.
 */
export class StepChain {
  private chained = 0;
  private readonly deadline: number;

  constructor(
    private readonly slot: JobSlot,
    private readonly limits: StepChainLimits,
    private readonly shutdown: ShutdownSignal,
  ) {
    this.deadline = Date.now() + limits.maxDurationMs;
  }

  /** Whether `step`, due at `scheduledFor` with `jobOptions`, runs in process next. Counts it if so. */
  claim(
    step: StepDefinition,
    jobOptions: StepJobOptions,
    defaultQueue: string,
    scheduledFor: Date,
  ): boolean {
    const qualifies =
      this.chained < this.limits.maxSteps &&
      step.kind !== 'removed' &&
      !step.waitFor &&
      scheduledFor.getTime() <= Date.now() &&
      (jobOptions.queue ?? defaultQueue) === this.slot.queue &&
      jobOptions.priority === this.slot.priority &&
      Date.now() < this.deadline &&
      !this.shutdown.requested;
    if (qualifies) this.chained += 1;
    return qualifies;
  }
}
