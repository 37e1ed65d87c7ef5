import type { HousekeepingResult } from '../interfaces/workflow-service.interface';

/**
 * One housekeeping pass in full (`HousekeepingService.runReport()`): its `HousekeepingResult` and
 * what the result's shape leaves out, as the pass's log line and the CLI give it.
 */
export interface HousekeepingReport {
  result: HousekeepingResult;
  /** `scheduled` executions whose job the queue had lost, enqueued again. */
  lostJobsReenqueued: number;
  /** Parked executions past their wait deadline, timed out by the backstop sweep. */
  waitTimeoutsFired: number;
  /** True when another process held the housekeeping lock: nothing ran (all zeros). */
  skipped: boolean;
}
