/**
 * What a queue knows about one job: `pending` (waiting, delayed, prioritized or active: it will
 * still run, or is running), `finished` (completed or failed: it will not run again), `missing`
 * (the queue holds no such job, e.g. after a Redis flush or restart without persistence).
 */
export type StepJobPresence = 'pending' | 'finished' | 'missing';

/**
 * A step-job queue that can say whether jobs are still due to run. BullMQ can; the testing
 * module's in-process queue cannot (it never loses a job), so reconciliation skips it.
 */
export interface StepJobInspector {
  /** The presence of each job id in the named queue. */
  jobPresence(queue: string, jobIds: readonly string[]): Promise<Map<string, StepJobPresence>>;
}

/** Whether `queue` implements `StepJobInspector`. */
export function isStepJobInspector(queue: object): queue is StepJobInspector {
  return typeof (queue as Partial<StepJobInspector>).jobPresence === 'function';
}
