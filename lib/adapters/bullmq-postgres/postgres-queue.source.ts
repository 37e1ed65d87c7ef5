import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import * as bullmq from 'bullmq';
import type { PostgresPoolConfig } from 'bullmq';
import { ModuleOptionsError } from '../../errors/module-options.error';
import { InjectResolvedOptions } from '../../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../../options/resolved-options.interface';
import { TransportOutage } from '../../queue/transport-outage';
import { BullmqQueueSource, type BullmqQueueHandle } from '../bullmq/bullmq-queue.source';
import { untilReady } from '../bullmq/until-ready';
import { postgresTransportConnection } from './postgres-transport.connection';

/** BullMQ's backend factory for PostgreSQL (BullMQ ≥ 6; absent from BullMQ 5). */
export type PostgresBackendFactory = NonNullable<typeof bullmq.createPostgresBackend>;

/**
 * Queues on BullMQ's PostgreSQL backend (`transport: 'postgres'`), created here on first use,
 * consumed or not: `@nestjs/bullmq` builds its queues with the Redis backend only. Each queue
 * owns a `pg` pool of the backend; `close()` (PostgresTransportWorkers, after the workers) closes
 * them.
 */
@Injectable()
export class PostgresQueueSource extends BullmqQueueSource {
  private readonly queues = new Map<string, BullmqQueueHandle>();
  private resolvedConnection: PostgresPoolConfig | null = null;

  constructor(
    // The DataSource is looked up, not injected: GenevaDriveDataSource depends on the step-job
    // queue, which depends on this.
    private readonly moduleRef: ModuleRef,
    private readonly outage: TransportOutage,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {
    super();
  }

  /** BullMQ's PostgreSQL backend, refused by name on a BullMQ without one. */
  get backend(): PostgresBackendFactory {
    const factory = (bullmq as { createPostgresBackend?: PostgresBackendFactory })
      .createPostgresBackend;
    if (!factory) {
      throw new ModuleOptionsError(
        "transport 'postgres' runs on BullMQ's PostgreSQL backend, which BullMQ 6 introduced; the installed BullMQ has none. " +
          "Run npm install bullmq@^6, or use transport 'redis'.",
      );
    }
    return factory;
  }

  /** The backend's connection (the data source's database unless `connection` names one). */
  get connection(): PostgresPoolConfig {
    this.resolvedConnection ??= postgresTransportConnection(
      this.options.connection as Record<string, unknown>,
      this.moduleRef.get<DataSource>(getDataSourceToken(this.options.dataSource), { strict: false })
        .options,
      this.options.prefix,
    );
    return this.resolvedConnection;
  }

  queue(name: string): BullmqQueueHandle {
    let queue = this.queues.get(name);
    if (!queue) {
      const created: BullmqQueueHandle = new bullmq.Queue(
        name,
        { connection: this.connection },
        this.backend,
      );
      queue = created;
      queue.on('error', (error: Error) => void this.outage.failed(error));
      this.queues.set(name, queue);
    }
    return queue;
  }

  consumedQueues(): BullmqQueueHandle[] {
    return Object.keys(this.options.queues).map((name) => this.queue(name));
  }

  async close(): Promise<void> {
    const queues = [...this.queues.values()];
    this.queues.clear();
    await Promise.all(
      queues.map(async (queue) => {
        await untilReady(queue);
        await queue.close();
      }),
    );
  }
}
