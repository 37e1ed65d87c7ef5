import { getQueueToken } from '@nestjs/bullmq';
import { Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Queue, type ConnectionOptions } from 'bullmq';
import { InjectResolvedOptions } from '../../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../../options/resolved-options.interface';
import { TransportOutage } from '../../queue/transport-outage';
import { BullmqQueueSource } from './bullmq-queue.source';
import { untilReady } from './until-ready';

/**
 * Queues on Redis: the consumed ones are `@nestjs/bullmq`'s (it closes them); queues this process
 * only produces to (a step's `jobOptions.queue`) are created here and closed at shutdown.
 */
@Injectable()
export class RedisQueueSource extends BullmqQueueSource implements BeforeApplicationShutdown {
  private readonly producedOnly = new Map<string, Queue>();

  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly outage: TransportOutage,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {
    super();
  }

  queue(name: string): Queue {
    if (name in this.options.queues) {
      return this.moduleRef.get<Queue>(getQueueToken(name), { strict: false });
    }
    let queue = this.producedOnly.get(name);
    if (!queue) {
      queue = new Queue(name, {
        // BullMQ 5's ConnectionOptions needs the assertion; BullMQ 6's takes the object as it is.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
        connection: this.options.connection as ConnectionOptions,
        prefix: this.options.prefix,
      });
      queue.on('error', (error: Error) => void this.outage.failed(error));
      this.producedOnly.set(name, queue);
    }
    return queue;
  }

  consumedQueues(): Queue[] {
    return Object.keys(this.options.queues).flatMap((name) => {
      try {
        return [this.moduleRef.get<Queue>(getQueueToken(name), { strict: false })];
      } catch {
        return [];
      }
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    // A BullMQ queue closed while its Redis connection is still being established (an app whose
    // boot failed at once, a queue first used just before shutdown) emits an `error` nobody can
    // listen to any more, which throws; so give each a moment to connect first. `@nestjs/bullmq`
    // closes the consumed queues next.
    await Promise.all(
      [...this.producedOnly.values()].map(async (queue) => {
        await untilReady(queue);
        await queue.close();
      }),
    );
    this.producedOnly.clear();
    await Promise.all(this.consumedQueues().map((queue) => untilReady(queue)));
  }
}
