import type { LoggerService } from '@nestjs/common';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';

/**
 * Queues that some step is routed to (class or step job options, or the default queue) but that
 * this process does not consume, with the steps routed there. Instance options are per workflow
 * row and cannot be known at boot.
 */
export function unconsumedQueues(
  definitions: readonly WorkflowDefinition[],
  consumed: readonly string[],
  defaultQueue: string,
): Map<string, string[]> {
  const missing = new Map<string, string[]>();
  for (const definition of definitions) {
    for (const step of definition.steps.runnable) {
      const queue = step.jobOptions.queue ?? definition.stepJobOptions.queue ?? defaultQueue;
      if (consumed.includes(queue)) continue;
      missing.set(queue, [...(missing.get(queue) ?? []), `${definition.name}.${step.name}`]);
    }
  }
  return missing;
}

/**
 * Warns once per queue a step is routed to that this process does not consume: such a step
 * waits forever unless another process consumes that queue.
 */
export function warnAboutUnconsumedQueues(
  definitions: readonly WorkflowDefinition[],
  consumed: readonly string[],
  defaultQueue: string,
  logger: LoggerService,
): void {
  for (const [queue, steps] of unconsumedQueues(definitions, consumed, defaultQueue)) {
    logger.warn(
      `Queue '${queue}' is used by ${steps.join(', ')} but this process consumes only ${consumed.join(', ') || 'no queue'}. ` +
        `Add it to the module's queues option here, or make sure another process consumes it.`,
    );
  }
}
