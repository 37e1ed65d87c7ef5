import { randomBytes } from 'node:crypto';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Queue, createPostgresBackend } from 'bullmq';
import type { DataSource } from 'typeorm';
import {
  HousekeepingService,
  WorkflowService,
  type HousekeepingResult,
  type WorkflowEntity,
} from '../../../lib';
import {
  RELIABILITY_JOURNAL_DDL,
  type ReliabilitySettings,
} from '../../fixtures/reliability.workflows';
import { bullmqSchemaFor } from '../../../lib/adapters/bullmq-postgres/postgres-transport.connection';
import { sleep } from './wait';
import { PrivatePostgres } from './private-postgres';
import { PrivateRedis } from './private-redis';
import { PrivateRedisCluster } from './private-redis-cluster';
import {
  ReliabilityModule,
  scenarioPostgresTransportConnection,
  scenarioRedisConnection,
  type ReliabilityAppOptions,
  type ReliabilityTarget,
} from './reliability-module';
import { reliabilityTransport, transportLabel } from './reliability-transport';
import { WorkerPool } from './worker-pool';

export interface ReliabilityHarnessOptions {
  /** Worker concurrency per child. */
  concurrency?: number;
  settings?: Partial<ReliabilitySettings>;
  /** Housekeeping options of the parent's control app (timers stay off; the scenario runs it). */
  housekeeping?: ReliabilityAppOptions['housekeeping'];
}

const DEFAULT_SETTINGS: Omit<ReliabilitySettings, 'worker'> = { stepMs: 20, items: 10, itemMs: 10 };

/** The scenario's Redis: a single server or a cluster, on loopback ports of its own. */
interface ScenarioRedis {
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * One fault-injection scenario's world: a private PostgreSQL cluster and a private Redis (both on
 * loopback, both the scenario's to kill; `bootOnCluster`: a private Redis Cluster; on the
 * PostgreSQL transport no Redis, the jobs in a BullMQ schema of the cluster), the engine's
 * tables and the journal, a control app in this process (`worker: false`: it starts workflows,
 * sends signals and runs housekeeping), and a pool of worker children.
 */
export class ReliabilityHarness<Redis extends ScenarioRedis = PrivateRedis> {
  readonly pool: WorkerPool;
  /** Per-child overrides of the worker options (a command-only child: `worker: false`). */
  readonly overrides = new Map<string, Partial<ReliabilityAppOptions>>();
  private inspection: { queue: Queue; release(): Promise<void> } | null = null;

  private constructor(
    /** Errors the control app's errorReporter saw. */
    readonly reported: string[],
    readonly postgres: PrivatePostgres,
    private readonly scenarioRedis: Redis | null,
    readonly target: ReliabilityTarget,
    readonly app: INestApplicationContext,
    private readonly options: ReliabilityHarnessOptions,
  ) {
    this.pool = new WorkerPool((name) => this.workerOptions(name));
  }

  /** The scenario on the transport GENEVA_RELIABILITY_TRANSPORT names (default Redis). */
  static boot(options: ReliabilityHarnessOptions = {}): Promise<ReliabilityHarness> {
    return ReliabilityHarness.bootWith(
      reliabilityTransport === 'redis' ? () => PrivateRedis.start() : null,
      false,
      options,
    );
  }

  /**
   * The scenario on a private Redis Cluster (three masters, a replica each): every app connects
   * through an ioredis Cluster, with a hash-tagged prefix.
   */
  static bootOnCluster(
    options: ReliabilityHarnessOptions = {},
  ): Promise<ReliabilityHarness<PrivateRedisCluster>> {
    return ReliabilityHarness.bootWith(() => PrivateRedisCluster.start(), true, options);
  }

  /** `startRedis` null: the PostgreSQL transport, with no Redis. */
  private static async bootWith<Redis extends ScenarioRedis>(
    startRedis: (() => Promise<Redis>) | null,
    cluster: boolean,
    options: ReliabilityHarnessOptions,
  ): Promise<ReliabilityHarness<Redis>> {
    const postgres = await PrivatePostgres.start();
    const redis = startRedis
      ? await startRedis().catch(async (error: unknown) => {
          await postgres.stop();
          throw error;
        })
      : null;
    const prefix = `gd-rel-${randomBytes(4).toString('hex')}`;
    const target: ReliabilityTarget = {
      transport: redis ? 'redis' : 'postgres',
      pgHost: '127.0.0.1',
      pgPort: postgres.port,
      pgDatabase: 'postgres',
      redisPort: redis?.port ?? null,
      redisCluster: cluster,
      prefix: cluster ? `{${prefix}}` : prefix,
    };
    const reported: string[] = [];
    try {
      const app = await NestFactory.createApplicationContext(
        ReliabilityModule.forRoot({
          target,
          applicationName: 'reliability-control',
          worker: false,
          concurrency: 1,
          poolSize: 10,
          migrate: true,
          settings: { ...DEFAULT_SETTINGS, ...options.settings, worker: 'control' },
          housekeeping: options.housekeeping,
          logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
          errorReporter: (error) => {
            reported.push(error.message);
          },
        }),
        { logger: false },
      );
      const harness = new ReliabilityHarness(reported, postgres, redis, target, app, options);
      await harness.dataSource.query(RELIABILITY_JOURNAL_DDL);
      return harness;
    } catch (error) {
      await redis?.stop();
      await postgres.stop();
      throw error;
    }
  }

  /** The scenario's Redis (a scenario about Redis runs on the Redis transport only). */
  get redis(): Redis {
    if (!this.scenarioRedis)
      throw new Error(`this scenario runs ${transportLabel}: it has no Redis`);
    return this.scenarioRedis;
  }

  get service(): WorkflowService {
    return this.app.get(WorkflowService);
  }

  get housekeeping(): HousekeepingService {
    return this.app.get(HousekeepingService);
  }

  get dataSource(): DataSource {
    return this.app.get<DataSource>(getDataSourceToken());
  }

  /** Options of the worker child `name`. */
  workerOptions(name: string): ReliabilityAppOptions {
    const concurrency = this.options.concurrency ?? 4;
    return {
      target: this.target,
      applicationName: `reliability-${name}`,
      worker: true,
      concurrency,
      poolSize: concurrency + 4,
      settings: { ...DEFAULT_SETTINGS, ...this.options.settings, worker: name },
      ...this.overrides.get(name),
    };
  }

  /** Starts `count` workflows of each type (heroless), interleaved; resolves their ids by type. */
  async startWorkflows(counts: Record<string, number>): Promise<Map<string, string[]>> {
    const ids = new Map<string, string[]>(Object.keys(counts).map((type) => [type, []]));
    const order: string[] = [];
    for (let round = 0; order.length < Object.values(counts).reduce((a, b) => a + b, 0); round++) {
      for (const [type, count] of Object.entries(counts)) if (round < count) order.push(type);
    }
    for (let start = 0; start < order.length; start += 25) {
      await Promise.all(
        order.slice(start, start + 25).map(async (type) => {
          const workflow = await this.service.start(type);
          ids.get(type)!.push(workflow.id);
        }),
      );
    }
    return ids;
  }

  /** Counts workflows by state. */
  async stateCounts(): Promise<Record<string, number>> {
    const rows = await this.dataSource.query<Array<{ state: string; count: number }>>(
      'SELECT state, COUNT(*)::int AS count FROM geneva_drive_workflows GROUP BY state',
    );
    return Object.fromEntries(rows.map((row) => [row.state, row.count]));
  }

  /**
   * Runs housekeeping every `everyMs` until `done` holds, the timeout passes, or nothing can move
   * any more (no workflow ready or performing: the rest are paused or canceled, which the
   * invariant checks then report); resolves the summed results and the number of runs.
   */
  async housekeepUntil(
    done: () => Promise<boolean>,
    { everyMs = 1_000, timeoutMs = 60_000 } = {},
  ): Promise<{ runs: number; totals: HousekeepingResult; ms: number }> {
    const totals: HousekeepingResult = {
      workflowsCleanedUp: 0,
      stepExecutionsCleanedUp: 0,
      signalsCleanedUp: 0,
      stuckInProgressRecovered: 0,
      stuckScheduledRecovered: 0,
      signalsExpired: 0,
    };
    const startedAt = Date.now();
    let runs = 0;
    while (!(await done())) {
      if (Date.now() - startedAt > timeoutMs) break;
      const states = await this.stateCounts();
      if (runs > 0 && !states.ready && !states.performing) break;
      const result = await this.housekeeping.run();
      runs += 1;
      for (const key of Object.keys(totals) as Array<keyof HousekeepingResult>)
        totals[key] += result[key];
      await sleep(everyMs);
    }
    return { runs, totals, ms: Date.now() - startedAt };
  }

  /** Whether every listed workflow reached `finished`. */
  async allFinished(ids: string[]): Promise<boolean> {
    const rows = await this.dataSource.query<Array<{ count: number }>>(
      `SELECT COUNT(*)::int AS count FROM geneva_drive_workflows WHERE id = ANY($1) AND state = 'finished'`,
      [ids],
    );
    return rows[0].count === ids.length;
  }

  async workflows(ids: string[]): Promise<WorkflowEntity[]> {
    return (await Promise.all(ids.map((id) => this.service.find(id)))).filter(
      (workflow): workflow is WorkflowEntity => workflow !== null,
    );
  }

  /**
   * A BullMQ handle on the scenario's queue, to look at jobs. On the PostgreSQL transport it is a
   * `Queue` on BullMQ's PostgreSQL backend (the same class, typed as the Redis one the scenarios
   * use).
   */
  get queue(): Queue {
    if (!this.inspection && this.target.transport === 'postgres') {
      const connection = {
        ...scenarioPostgresTransportConnection(this.target, 'reliability-inspection'),
        schema: bullmqSchemaFor(this.target.prefix),
      };
      const queue = new Queue(
        'geneva-drive',
        { connection },
        createPostgresBackend,
      ) as unknown as Queue;
      this.inspection = { queue, release: () => Promise.resolve() };
    }
    if (!this.inspection) {
      const redis = scenarioRedisConnection(this.target);
      const queue = new Queue('geneva-drive', {
        connection: redis.connection,
        prefix: this.target.prefix,
      });
      this.inspection = { queue, release: () => redis.release() };
    }
    return this.inspection.queue;
  }

  /** One line per execution: state, outcome, job id and that job's BullMQ state (for failures). */
  async describeExecutions(executionIds: string[]): Promise<string[]> {
    const rows = await this.dataSource.query<
      Array<{
        id: string;
        step_name: string;
        state: string;
        outcome: string | null;
        job_id: string;
      }>
    >(
      'SELECT id, step_name, state, outcome, job_id FROM geneva_drive_step_executions WHERE id = ANY($1)',
      [executionIds],
    );
    return Promise.all(
      rows.map(
        async (row) =>
          `${row.id} ${row.step_name} ${row.state}/${row.outcome} job ${row.job_id}: ${await this.queue.getJobState(row.job_id)}`,
      ),
    );
  }

  async close(): Promise<void> {
    try {
      await this.inspection?.queue.close();
      await this.inspection?.release();
      await this.pool.stopAll();
      await this.app.close();
    } finally {
      await this.scenarioRedis?.stop();
      await this.postgres.stop();
    }
  }
}
