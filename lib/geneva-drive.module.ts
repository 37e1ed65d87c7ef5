import { BullModule } from '@nestjs/bullmq';
import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { GENEVA_DRIVE_BULL_CONFIG_KEY, GENEVA_DRIVE_REAL_MODULE_MARKER } from './common/constants';
import { ModuleOptionsError } from './errors/module-options.error';
import { GENEVA_DRIVE_CORE_PROVIDERS, GENEVA_DRIVE_EXPORTS } from './geneva-drive.providers';
import {
  GENEVA_DRIVE_MODULE_OPTIONS,
  GenevaDriveConfigurableModule,
} from './geneva-drive.module-definition';
import type {
  GenevaDriveTransport,
  GenevaDriveModuleAsyncOptions,
  GenevaDriveModuleOptions,
  GenevaDriveQueueOptions,
} from './interfaces/module-options.interface';
import {
  validateForRootArgument,
  validateForRootAsyncArgument,
} from './options/module-arguments.validator';
import { defaultQueues, resolveModuleOptions } from './options/resolve-module-options';
import type { ResolvedGenevaDriveOptions } from './options/resolved-options.interface';
import { GENEVA_DRIVE_RESOLVED_OPTIONS } from './options/resolved-options.token';
import { BullmqQueueSource } from './adapters/bullmq/bullmq-queue.source';
import { BullmqStepJobQueue } from './adapters/bullmq/bullmq-step-job.queue';
import { RedisQueueSource } from './adapters/bullmq/redis-queue.source';
import { PostgresQueueSource } from './adapters/bullmq-postgres/postgres-queue.source';
import { PostgresTransportWorkers } from './adapters/bullmq-postgres/postgres-transport.workers';
import { createStepProcessor } from './adapters/bullmq/step.processor';
import { StepJobQueue } from './queue/step-job.queue';
import { WorkerLifecycleService } from './adapters/bullmq/worker-lifecycle.service';
import { LocalStepJobQueue } from './adapters/local/local-step-job.queue';
import { LocalTransportRecovery } from './adapters/local/local-transport.recovery';

/** Holds the options providers, so BullMQ's async config can import them too. */
@Module({})
class GenevaDriveOptionsModule {}

/**
 * Durable workflows on BullMQ and TypeORM. Import once, in the root module:
 * `GenevaDriveModule.forRoot({ ... })` or `GenevaDriveModule.forRootAsync({ useFactory })`.
 * Global by default.
 */
@Module({})
export class GenevaDriveModule extends GenevaDriveConfigurableModule {
  static override forRoot(options: GenevaDriveModuleOptions = {}): DynamicModule {
    validateForRootArgument(options);
    return assemble(super.forRoot(options), options, 'GenevaDriveModule.forRoot()');
  }

  static override forRootAsync(options: GenevaDriveModuleAsyncOptions): DynamicModule {
    validateForRootAsyncArgument(options);
    const { queues, transport, ...builderOptions } = options;
    return assemble(
      super.forRootAsync(builderOptions),
      { queues, transport },
      'GenevaDriveModule.forRootAsync()',
    );
  }
}

/** What the module's shape depends on, so it must be known before an options factory runs. */
interface StaticOptions {
  queues?: Record<string, GenevaDriveQueueOptions>;
  transport?: GenevaDriveTransport;
}

function assemble(base: DynamicModule, statics: StaticOptions, source: string): DynamicModule {
  const consumed = defaultQueues(statics.queues);
  const transport = statics.transport ?? 'redis';
  const resolvedOptions: Provider = {
    provide: GENEVA_DRIVE_RESOLVED_OPTIONS,
    inject: [GENEVA_DRIVE_MODULE_OPTIONS],
    useFactory: (raw: GenevaDriveModuleOptions): ResolvedGenevaDriveOptions => {
      if (raw === undefined || raw === null) {
        // forRoot() always passes an object, so this is an async factory that returned nothing.
        throw new ModuleOptionsError(
          `${source}: the options factory returned ${String(raw)}. Return an options object ({} for the defaults).`,
        );
      }
      const resolved = resolveModuleOptions(raw, source);
      if (
        raw?.queues !== undefined &&
        JSON.stringify(resolved.queues) !== JSON.stringify(consumed)
      ) {
        throw new ModuleOptionsError(
          `${source}: queues must be known before the options factory runs; pass them as forRootAsync({ queues, useFactory }).`,
        );
      }
      if (resolved.transport !== transport) {
        throw new ModuleOptionsError(
          `${source}: transport must be known before the options factory runs; pass it as forRootAsync({ transport: '${resolved.transport}', useFactory }).`,
        );
      }
      return { ...resolved, queues: consumed };
    },
  };
  const optionsModule: DynamicModule = {
    module: GenevaDriveOptionsModule,
    imports: base.imports ?? [],
    providers: [...(base.providers ?? []), resolvedOptions],
    exports: [GENEVA_DRIVE_MODULE_OPTIONS, GENEVA_DRIVE_RESOLVED_OPTIONS],
  };
  const core: DynamicModule = {
    module: GenevaDriveModule,
    global: base.global ?? true,
    imports: [optionsModule, DiscoveryModule],
    providers: [
      ...GENEVA_DRIVE_CORE_PROVIDERS,
      { provide: GENEVA_DRIVE_REAL_MODULE_MARKER, useValue: true },
    ],
    exports: [...GENEVA_DRIVE_EXPORTS, optionsModule, GENEVA_DRIVE_REAL_MODULE_MARKER],
  };
  if (transport === 'local') return withLocalTransport(core);
  if (transport === 'postgres') return withBullmqOnPostgres(core);
  return withBullmq(core, optionsModule, consumed);
}

/** Steps in this process: no BullMQ, no Redis connection. */
function withLocalTransport(core: DynamicModule): DynamicModule {
  return {
    ...core,
    providers: [
      ...core.providers!,
      LocalStepJobQueue,
      { provide: StepJobQueue, useExisting: LocalStepJobQueue },
      LocalTransportRecovery,
    ],
  };
}

/**
 * BullMQ on its PostgreSQL backend: the library creates the queues and workers (`@nestjs/bullmq`
 * builds Redis ones only); no Redis connection.
 */
function withBullmqOnPostgres(core: DynamicModule): DynamicModule {
  return {
    ...core,
    providers: [
      ...core.providers!,
      PostgresQueueSource,
      { provide: BullmqQueueSource, useExisting: PostgresQueueSource },
      BullmqStepJobQueue,
      { provide: StepJobQueue, useExisting: BullmqStepJobQueue },
      PostgresTransportWorkers,
    ],
  };
}

/** BullMQ on Redis: one processor per consumed queue, started by WorkerLifecycleService. */
function withBullmq(
  core: DynamicModule,
  optionsModule: DynamicModule,
  consumed: Record<string, Required<GenevaDriveQueueOptions>>,
): DynamicModule {
  const processors = Object.entries(consumed).map(([name, { concurrency }]) =>
    createStepProcessor(name, concurrency),
  );
  return {
    ...core,
    imports: [
      ...core.imports!,
      BullModule.forRootAsync(GENEVA_DRIVE_BULL_CONFIG_KEY, {
        imports: [optionsModule],
        inject: [GENEVA_DRIVE_RESOLVED_OPTIONS],
        useFactory: (resolved: ResolvedGenevaDriveOptions) => ({
          connection: resolved.connection,
          prefix: resolved.prefix,
        }),
      }),
      BullModule.registerQueue(
        ...Object.keys(consumed).map((name) => ({ name, configKey: GENEVA_DRIVE_BULL_CONFIG_KEY })),
      ),
    ],
    providers: [
      ...core.providers!,
      ...processors,
      RedisQueueSource,
      { provide: BullmqQueueSource, useExisting: RedisQueueSource },
      BullmqStepJobQueue,
      { provide: StepJobQueue, useExisting: BullmqStepJobQueue },
      WorkerLifecycleService,
    ],
  };
}
