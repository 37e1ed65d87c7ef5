import { getQueueToken } from '@nestjs/bullmq';
import { Logger, type Provider } from '@nestjs/common';
import type { Queue } from 'bullmq';

/** Token of the provider that listens for the registered queues' `error` events. */
export const QUEUE_ERROR_LISTENERS = Symbol('geneva-drive:queue-error-listeners');

/**
 * Logs the `error` events of the queues registered through `@nestjs/bullmq`, which attaches no
 * listener of its own: an unheard `error` event throws. It happens, for one, when an app whose
 * boot failed is closed while a queue is still connecting to Redis ("Connection is closed").
 * A factory, so the listeners are attached when the queues are created, before any boot hook.
 */
export function queueErrorListeners(queueNames: string[]): Provider {
  return {
    provide: QUEUE_ERROR_LISTENERS,
    inject: queueNames.map((name) => getQueueToken(name)),
    useFactory: (...queues: Queue[]) => {
      const logger = new Logger('GenevaDrive');
      for (const queue of queues) {
        queue.on('error', (error: Error) =>
          logger.warn(`BullMQ queue '${queue.name}': ${error.message}`),
        );
      }
      return queues.length;
    },
  };
}
