import type { Duration } from './states.interface';

/**
 * BullMQ job options for step jobs, at class (`@Workflow({ stepJobOptions })`), instance
 * (`start(..., { stepJobOptions })`) and step (`@Step({ jobOptions })`) level; merged
 * class < instance < step.
 */
export interface StepJobOptions {
  /** BullMQ queue the step job goes to; default: the module's `defaultQueue`. */
  queue?: string;
  /** BullMQ priority, an integer 1..2097151 (1 = highest); default: unprioritized. */
  priority?: number;
  /** Delay before the job runs, only when the step itself carries no wait. */
  wait?: Duration;
  /** Earliest time the job runs, only when the step itself carries no wait. */
  waitUntil?: Date;
}
