import type { Abstract, DynamicModule, INestApplication, Provider, Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import type { DataSource, MigrationInterface } from 'typeorm';
import { getDataSourceToken } from '@nestjs/typeorm';
import {
  GenevaDriveModule,
  WorkflowRunner,
  WorkflowService,
  type GenevaDriveModuleOptions,
  type StepExecutionEntity,
  type WorkflowEntity,
} from '../../../lib';
import { createSchema, dataSourceOptions, dropSchema, type EntitySchemaTarget } from './database';
import { openTestRedis, testPrefix, type TestRedisConnection } from './redis';
import {
  dropTransportSchema,
  postgresTransportQueue,
  testTransport,
  transportOptions,
} from './transport';

export interface EngineHarnessOptions {
  workflows: Provider[];
  entities?: EntitySchemaTarget[];
  providers?: Provider[];
  options?: GenevaDriveModuleOptions;
  imports?: Array<Type<unknown> | DynamicModule>;
  /** Migrations to run (default: all of GENEVA_DRIVE_MIGRATIONS). */
  migrations?: Array<new () => MigrationInterface>;
  /** Boot on an existing namespace and BullMQ prefix (a restart of the same deployment). */
  reuse?: { schema: string; prefix: string };
  /**
   * Driver options merged over the namespace's `extra`: the benchmarks size the PostgreSQL pool
   * (`{ max: 8 }`, see bench/support/engine.ts `benchPoolSize`).
   */
  extra?: Record<string, unknown>;
  /** Called on the app before `init()`: a global prefix, global pipes, as an app's main.ts does. */
  configure?: (app: INestApplication) => void;
}

/**
 * A real NestJS app on a real database and Redis (fresh BullMQ prefix), as users run it. The
 * database is GENEVA_TEST_DB's (support/database.ts), in a namespace of the harness's own: a
 * PostgreSQL schema, a MariaDB database or a SQLite file, named by `schema`. The Redis is the
 * suite's (support/redis.ts): with GENEVA_TEST_REDIS_CLUSTER, a Redis Cluster through an ioredis
 * `Cluster` of the harness's own and a hash-tagged prefix. The transport is GENEVA_TEST_TRANSPORT's
 * (support/transport.ts). `close()` closes the app, removes the jobs (obliterates the Redis queues,
 * drops the BullMQ schema on PostgreSQL; the local transport's die with the app) and drops that
 * namespace.
 */
export class EngineHarness {
  private readonly queues = new Map<string, Queue>();

  private constructor(
    readonly app: INestApplication,
    readonly schema: string,
    readonly prefix: string,
    private readonly redis: TestRedisConnection,
  ) {}

  static async boot(options: EngineHarnessOptions): Promise<EngineHarness> {
    const schema = options.reuse?.schema ?? (await createSchema());
    const prefix = options.reuse?.prefix ?? testPrefix();
    const dataSource = dataSourceOptions(schema, options.entities, options.migrations);
    const redis = openTestRedis();
    let moduleRef: TestingModule | undefined;
    try {
      moduleRef = await Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot(
            options.extra
              ? { ...dataSource, extra: { ...dataSource.extra, ...options.extra } }
              : dataSource,
          ),
          GenevaDriveModule.forRoot({
            connection: redis.connection,
            prefix,
            housekeeping: { enabled: false },
            ...transportOptions(),
            ...options.options,
          }),
          ...(options.imports ?? []),
        ],
        providers: [...options.workflows, ...(options.providers ?? [])],
      }).compile();
      const app = moduleRef.createNestApplication({ logger: false });
      options.configure?.(app);
      await app.init();
      return new EngineHarness(app, schema, prefix, redis);
    } catch (error) {
      // A refused boot has opened the data source's pool already: left open, jest never exits.
      await moduleRef?.close().catch(() => undefined);
      await redis.release();
      throw error;
    }
  }

  get service(): WorkflowService {
    return this.app.get(WorkflowService);
  }

  get runner(): WorkflowRunner {
    return this.app.get(WorkflowRunner);
  }

  get dataSource(): DataSource {
    return this.app.get<DataSource>(getDataSourceToken());
  }

  get<T>(token: Type<T> | Abstract<T>): T {
    return this.app.get(token);
  }

  /** Polls the workflow until `predicate` holds (BullMQ runs steps in the background). */
  async waitForWorkflow(
    id: string,
    predicate: (workflow: WorkflowEntity) => boolean | Promise<boolean>,
    timeoutMs = 10_000,
  ): Promise<WorkflowEntity> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const workflow = await this.service.find(id);
      if (workflow && (await predicate(workflow))) return workflow;
      if (Date.now() > deadline) {
        throw new Error(
          `Timed out waiting for workflow ${id}; last seen: ${JSON.stringify(workflow)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  waitForState(
    id: string,
    state: WorkflowEntity['state'],
    timeoutMs?: number,
  ): Promise<WorkflowEntity> {
    return this.waitForWorkflow(id, (workflow) => workflow.state === state, timeoutMs);
  }

  history(id: string): Promise<StepExecutionEntity[]> {
    return this.service.executionHistory(id);
  }

  /**
   * A BullMQ handle on one of the harness's queues (default queue unless named). The local
   * transport has no BullMQ queue to hand out: specs that inspect jobs skip themselves there.
   */
  queue(name = 'geneva-drive'): Queue {
    if (testTransport === 'local') {
      throw new Error('The local transport has no BullMQ queue: skip this spec on it.');
    }
    let queue = this.queues.get(name);
    if (!queue) {
      queue =
        testTransport === 'postgres'
          ? postgresTransportQueue(name, this.prefix)
          : new Queue(name, { connection: this.redis.connection, prefix: this.prefix });
      this.queues.set(name, queue);
    }
    return queue;
  }

  /** Closes the app only (SIGTERM of one process); the schema and queues stay. */
  async closeApp(): Promise<void> {
    await this.app.close();
    for (const queue of this.queues.values()) await queue.close();
    this.queues.clear();
    await this.redis.release();
  }

  async close(): Promise<void> {
    await this.app.close();
    if (testTransport === 'postgres') {
      for (const queue of this.queues.values()) await queue.close();
      await dropTransportSchema(this.prefix);
    } else if (testTransport === 'redis') {
      this.queue();
      for (const queue of this.queues.values()) {
        await queue.obliterate({ force: true });
        await queue.close();
      }
    }
    this.queues.clear();
    await this.redis.release();
    await dropSchema(this.schema);
  }
}
