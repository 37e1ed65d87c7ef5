/**
 * One job the testing module's in-process queue received, as `WorkflowTestHelper.enqueuedJobs()`
 * lists it (every job since boot, oldest first).
 */
export interface EnqueuedJob {
  /** `<executionId>` on an execution's first enqueue, `<executionId>_<n>` on re-enqueues. */
  jobId: string;
  stepExecutionId: string;
  /** The queue the job went to (`defaultQueue` unless job options name another). */
  queue: string;
  /** BullMQ priority (1 = highest); absent for unprioritized jobs. */
  priority?: number;
  /** ms from enqueue until the job is due; 0 when immediate. */
  delay: number;
}
