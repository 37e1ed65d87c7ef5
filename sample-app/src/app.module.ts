import { Module, ValidationPipe, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  GENEVA_DRIVE_ENTITIES,
  GENEVA_DRIVE_MIGRATIONS,
  GenevaDriveExceptionFilter,
  GenevaDriveModule,
} from 'nestjs-geneva-drive';
import { GenevaDriveDashboardModule } from 'nestjs-geneva-drive/dashboard';
import { CAMPAIGN_ENTITIES, CampaignsModule } from './campaigns/campaigns.module';
import {
  SAMPLE_APP_CONFIG,
  configFromEnv,
  parseRedisUrl,
  transportOf,
  type SampleAppConfig,
} from './config';
import { demoAuthorize } from './dashboard/demo-authorize';
import { ensureSchema } from './database';
import { Order } from './orders/order.entity';
import { OrdersModule } from './orders/orders.module';
import { WorkflowsModule } from './workflows/workflows.module';

const ENTITIES = [...GENEVA_DRIVE_ENTITIES, Order, ...CAMPAIGN_ENTITIES];

/** PostgreSQL when `DATABASE_URL` is set, else SQLite in a file under the project. */
async function databaseOptions(config: SampleAppConfig): Promise<TypeOrmModuleOptions> {
  // The library's tables come from its migrations, run at boot. `synchronize` creates the app's
  // own tables (orders, campaigns, ...) for a zero-setup demo (use migrations in production); it
  // never touches the library's tables: their entities are declared `synchronize: false`.
  const common = {
    entities: ENTITIES,
    migrations: GENEVA_DRIVE_MIGRATIONS,
    migrationsRun: true,
    synchronize: true,
  };
  if (!config.databaseUrl) {
    mkdirSync(dirname(config.sqliteFile), { recursive: true });
    return { type: 'better-sqlite3', database: config.sqliteFile, ...common };
  }
  await ensureSchema(config.databaseUrl, config.schema);
  return {
    type: 'postgres',
    url: config.databaseUrl,
    schema: config.schema,
    ...common,
    // A step holds a connection only while it prepares and while it finalizes; about 4 per
    // database core is plenty (README "Connection pool"), the HTTP handlers share it.
    extra: { max: 20 },
  };
}

/**
 * The sample app. `AppModule.forRoot()` reads the environment (see `config.ts`); tests pass
 * overrides, e.g. a throwaway schema and BullMQ prefix, or a SQLite file.
 */
@Module({})
export class AppModule {
  static forRoot(overrides: Partial<SampleAppConfig> = {}): DynamicModule {
    const config: SampleAppConfig = { ...configFromEnv(), ...overrides };
    const transport = transportOf(config);
    return {
      module: AppModule,
      imports: [
        // The host app owns the scheduler. nestjs-geneva-drive never imports
        // ScheduleModule.forRoot() itself (a second import would fire every @Cron twice); it adds
        // its housekeeping job to the SchedulerRegistry registered here.
        ScheduleModule.forRoot(),
        TypeOrmModule.forRootAsync({ useFactory: () => databaseOptions(config) }),
        GenevaDriveModule.forRootAsync({
          transport,
          useFactory: () => ({
            transport,
            ...(transport === 'redis' && config.redisUrl
              ? { connection: parseRedisUrl(config.redisUrl) }
              : {}),
            prefix: config.redisPrefix,
          }),
          // Housekeeping (cleanup of old workflows, recovery of stuck steps, gauges) runs on its
          // default cron ('*/5 * * * *') through the SchedulerRegistry imported above.
        }),
        OrdersModule,
        CampaignsModule,
        WorkflowsModule,
        // The operator dashboard at /geneva-drive, writable: readOnly false and an authorize
        // (a demo one that lets in connections from this machine only; see its file).
        GenevaDriveDashboardModule.forRoot({ readOnly: false, authorize: demoAuthorize }),
      ],
      providers: [
        { provide: SAMPLE_APP_CONFIG, useValue: config },
        {
          provide: APP_PIPE,
          useValue: new ValidationPipe({
            whitelist: true,
            forbidNonWhitelisted: true,
            transform: true,
          }),
        },
        { provide: APP_FILTER, useClass: GenevaDriveExceptionFilter },
      ],
      exports: [SAMPLE_APP_CONFIG],
    };
  }
}
