/** One BullMQ job that runs one step execution. */
export interface StepJob {
  /** `<executionId>` on first enqueue, `<executionId>_<n>` on re-enqueues. */
  jobId: string;
  stepExecutionId: string;
  queue: string;
  /** BullMQ priority (1 = highest); undefined = unprioritized. */
  priority?: number;
  /** ms until the job is due; 0 = now. */
  delay: number;
}
