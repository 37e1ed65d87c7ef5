/** What one queue's transport answered: the workers connected to consume it. */
export interface QueueTransportStatus {
  queue: string;
  workers: number;
}

/**
 * A step-job queue whose transport can be asked whether it answers (BullMQ: a Redis round trip
 * per queue this process registered). The testing module's in-process queue has no transport.
 */
export interface StepJobTransportProbe {
  /** Rejects when the transport does not answer. */
  transportStatus(): Promise<QueueTransportStatus[]>;
}

/** Whether `queue` implements `StepJobTransportProbe`. */
export function isStepJobTransportProbe(queue: object): queue is StepJobTransportProbe {
  return typeof (queue as Partial<StepJobTransportProbe>).transportStatus === 'function';
}
