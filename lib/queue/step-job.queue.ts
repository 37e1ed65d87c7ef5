import type { StepJob } from './step-job.interface';

/**
 * Where step jobs go: BullMQ in production, an in-process queue in the testing module. An
 * abstract class so it doubles as the DI token.
 */
export abstract class StepJobQueue {
  /** Adds the job; an add whose job id the queue already holds is ignored. */
  abstract add(job: StepJob): Promise<void>;

  /**
   * Adds the jobs together (BullMQ: one `addBulk` per queue); an adapter without a bulk add adds
   * them one by one, in order.
   */
  async addBulk(jobs: readonly StepJob[]): Promise<void> {
    for (const job of jobs) await this.add(job);
  }
}
