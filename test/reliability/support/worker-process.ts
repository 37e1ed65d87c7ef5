/**
 * A worker child of the fault-injection suite: boots a Nest application context with
 * GenevaDriveModule (worker: true, housekeeping off) on the scenario's PostgreSQL and Redis, with
 * shutdown hooks enabled, and tells the parent over IPC when it is ready and when a graceful
 * shutdown has finished. Run by WorkerPool through transpile-cache.js; its options come
 * as JSON in RELIABILITY_WORKER.
 */
import 'reflect-metadata';
import {
  Injectable,
  Module,
  type BeforeApplicationShutdown,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { INestApplicationContext } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { WorkflowRunner, WorkflowService } from '../../../lib';
import { Order } from '../../fixtures/order.entity';
import { ReliabilityModule, type ReliabilityAppOptions } from './reliability-module';

/** What the parent can ask a child to do, in the child's own process (races across processes). */
export type WorkerCommand =
  | { command: 'start'; workflow: string; heroId?: number }
  | { command: 'startInTransaction'; workflow: string; commitAfterMs: number }
  | { command: 'signal'; workflowId: string; name: string; idempotencyKey?: string }
  | { command: 'perform'; executionId: string }
  | { command: 'usage' };

/** What `usage` resolves: the child's resident set and CPU time so far. */
export interface WorkerUsage {
  rssBytes: number;
  cpuMicros: number;
}

/** Messages a worker child sends to the parent. */
export type WorkerMessage =
  | { type: 'ready'; pid: number }
  | { type: 'stopping'; signal: string | undefined }
  | { type: 'stopped' }
  | { type: 'result'; id: number; ok: true; value: unknown }
  | { type: 'result'; id: number; ok: false; error: { name: string; message: string } };

/** A command from the parent, with its correlation id. */
export type WorkerRequest = WorkerCommand & { type: 'command'; id: number };

function send(message: WorkerMessage): void {
  process.send?.(message);
}

@Injectable()
class ShutdownReporter implements BeforeApplicationShutdown, OnApplicationShutdown {
  beforeApplicationShutdown(signal?: string): void {
    send({ type: 'stopping', signal });
  }

  onApplicationShutdown(): void {
    send({ type: 'stopped' });
  }
}

@Module({})
class WorkerRootModule {
  static forRoot(options: ReliabilityAppOptions): DynamicModule {
    return {
      module: WorkerRootModule,
      imports: [ReliabilityModule.forRoot(options)],
      providers: [ShutdownReporter],
    };
  }
}

async function execute(app: INestApplicationContext, request: WorkerCommand): Promise<unknown> {
  const service = app.get(WorkflowService);
  switch (request.command) {
    case 'start': {
      const hero =
        request.heroId === undefined
          ? undefined
          : Object.assign(new Order(), { id: request.heroId });
      return (await service.start(request.workflow, hero ? { hero } : {})).id;
    }
    case 'startInTransaction': {
      // The caller's transaction stays open after start(): its rows are invisible until commit.
      const id = await app.get<DataSource>(getDataSourceToken()).transaction(async (manager) => {
        const workflow = await service.start(request.workflow, { manager });
        await new Promise((resolve) => setTimeout(resolve, request.commitAfterMs));
        return workflow.id;
      });
      return { id, committedAt: Date.now() };
    }
    case 'signal': {
      const signal = await service.signal(request.workflowId, request.name, {
        ...(request.idempotencyKey ? { idempotencyKey: request.idempotencyKey } : {}),
      });
      return { id: signal.id, duplicateDelivery: signal.duplicateDelivery };
    }
    case 'perform':
      await app.get(WorkflowRunner).performStep(request.executionId);
      return null;
    case 'usage': {
      const { user, system } = process.cpuUsage();
      return {
        rssBytes: process.memoryUsage().rss,
        cpuMicros: user + system,
      } satisfies WorkerUsage;
    }
  }
}

function listen(app: INestApplicationContext): void {
  process.on('message', (request: WorkerRequest) => {
    if (request?.type !== 'command') return;
    execute(app, request).then(
      (value) => send({ type: 'result', id: request.id, ok: true, value }),
      (error: unknown) =>
        send({
          type: 'result',
          id: request.id,
          ok: false,
          error: {
            name: (error as Error)?.name ?? 'Error',
            message: String((error as Error)?.message ?? error),
          },
        }),
    );
  });
}

async function main(): Promise<void> {
  const options = JSON.parse(process.env.RELIABILITY_WORKER ?? '{}') as ReliabilityAppOptions;
  const app = await NestFactory.createApplicationContext(WorkerRootModule.forRoot(options), {
    logger: ['error', 'warn'],
  });
  app.enableShutdownHooks();
  // The parent (the test run) is gone: nobody will stop this worker, so stop now.
  process.once('disconnect', () => process.exit(1));
  listen(app);
  send({ type: 'ready', pid: process.pid });
}

main().catch((error: unknown) => {
  console.error(`worker failed to boot: ${String((error as Error)?.stack ?? error)}`);
  process.exit(1);
});
