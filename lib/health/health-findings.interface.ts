import type { QueueTransportStatus } from '../queue/step-job-transport-probe';

/** The limits `isHealthy()` holds the backlog to (counts of executions). */
export interface HealthThresholds {
  /** Steps parked for a signal longer than `waitingVisibilityThreshold`. */
  maxWaitingOverdue?: number;
  /** Scheduled steps overdue by more than `housekeeping.stuckScheduledThreshold`. */
  maxStuckScheduled?: number;
}

/** What the health probe found; `healthy` is false when any `problems` were found. */
export interface HealthFindings {
  healthy: boolean;
  problems: string[];
  database: 'up' | 'down';
  /** `in-process`: the testing module's queue, which has no transport to reach. */
  transport: 'up' | 'down' | 'in-process';
  /** Per queue this process registered: the workers the transport sees consuming it. */
  queues?: QueueTransportStatus[];
  stuckScheduled?: number;
  waitingOverdue?: number;
}
