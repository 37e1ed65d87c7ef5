/**
 * What a job does: `run` the step execution, or `expireWait`: fire its signal wait's timeout
 * (fenced: only an execution still waiting past its deadline times out).
 */
export type StepJobKind = 'run' | 'expireWait';

/** One BullMQ job for one step execution. */
export interface StepJob {
  /**
   * `run`: `<executionId>` on first enqueue, `<executionId>_<n>` on re-enqueues; `expireWait`:
   * `<executionId>_timeout_<ms when armed>`.
   */
  jobId: string;
  /** Absent: `run`. */
  kind?: StepJobKind;
  stepExecutionId: string;
  /** Carried so the worker locks the workflow row without looking the execution up first. */
  workflowId: string;
  /** The workflow's hero, when it has one: see `StepJobData.heroType`. */
  heroType?: string;
  heroId?: string;
  /** The signal the execution is pinned to, when it has one: see `StepJobData.signalId`. */
  signalId?: string;
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
  /**
   * The workflow's hero (a hero never changes), so the worker can read it with the row locks. A
   * hint only: the hero loaded is the one the locked workflow row names.
   */
  heroType?: string;
  heroId?: string;
  /** The signal a woken execution is pinned to, read with the row locks likewise (a hint too). */
  signalId?: string;
}
