/** One BullMQ job that runs one step execution. */
export interface StepJob {
  /** `<executionId>` on first enqueue, `<executionId>_<n>` on re-enqueues. */
  jobId: string;
  stepExecutionId: string;
  /** Carried so the worker locks the workflow row without looking the execution up first. */
  workflowId: string;
  queue: string;
  /** BullMQ priority (1 = highest); undefined = unprioritized. */
  priority?: number;
  /** ms until the job is due; 0 = now. */
  delay: number;
}

/** The data a step job carries in the queue: which execution to run; all state lives in SQL. */
export interface StepJobData {
  stepExecutionId: string;
  /** Absent on jobs enqueued before the field existed (the runner then looks the execution up). */
  workflowId?: string;
}
