/** What one queue's transport answered: the workers connected to consume it. */
export interface QueueTransportStatus {
  queue: string;
  workers: number;
}

/** One queue's step jobs by state, as its transport holds them. */
export interface QueueJobCounts {
  queue: string;
  /** Due and not yet taken by a worker (prioritized ones included). */
  waiting: number;
  /** Not yet due. */
  delayed: number;
  /** Taken by a worker, running. */
  active: number;
}

/**
 * A step-job queue whose transport can be asked whether it answers (BullMQ: a Redis round trip
 * per queue this process registered). The testing module's in-process queue has no transport.
 */
export interface StepJobTransportProbe {
  /** Rejects when the transport does not answer. */
  transportStatus(): Promise<QueueTransportStatus[]>;
  /** The jobs of each queue this process registered, by state (the dashboard's queues page). */
  jobCounts(): Promise<QueueJobCounts[]>;
}

/** Whether `queue` implements `StepJobTransportProbe`. */
export function isStepJobTransportProbe(queue: object): queue is StepJobTransportProbe {
  return typeof (queue as Partial<StepJobTransportProbe>).transportStatus === 'function';
}
