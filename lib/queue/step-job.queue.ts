import type { StepJob } from './step-job.interface';

/**
 * Where step jobs go: BullMQ in production, an in-process queue in the testing module. An
 * abstract class so it doubles as the DI token.
 */
export abstract class StepJobQueue {
  /** Adds the job; an add whose job id the queue already holds is ignored. */
  abstract add(job: StepJob): Promise<void>;
}
