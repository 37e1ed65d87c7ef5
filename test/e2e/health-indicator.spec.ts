import { Controller, Get, Module, Query } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import request from 'supertest';
import { StepExecutionEntity, WorkflowService } from '../../lib';
import { GenevaDriveHealthIndicator } from '../../lib/terminus';
import { HousekeepingDelayedWorkflow } from '../fixtures/housekeeping.workflows';
import { Order } from '../fixtures/order.entity';
import { StepScript } from '../fixtures/step-script';
import { PrivateRedis } from '../reliability/support/private-redis';
import { testDatabaseLabel, testPooler } from './support/database';
import { describeIf } from './support/describe-if';
import { testTransport } from './support/transport';
import { EngineHarness } from './support/engine-harness';
import { testRedisCluster } from './support/redis';

/** A readiness endpoint as an app writes one with @nestjs/terminus. */
@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly genevaDrive: GenevaDriveHealthIndicator,
  ) {}

  @Get('ready')
  @HealthCheck()
  ready(@Query('maxStuckScheduled') maxStuckScheduled?: string) {
    return this.health.check([
      () =>
        this.genevaDrive.isHealthy('geneva-drive', {
          maxStuckScheduled:
            maxStuckScheduled === undefined ? undefined : Number(maxStuckScheduled),
          maxWaitingOverdue: 10,
        }),
    ]);
  }
}

@Module({
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [GenevaDriveHealthIndicator],
})
class HealthModule {}

interface HealthBody {
  status: 'ok' | 'error';
  details: Record<string, Record<string, unknown>>;
}

const HOUR = 3_600_000;

describe(`GenevaDriveHealthIndicator (${testDatabaseLabel})`, () => {
  let harness: EngineHarness;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [HousekeepingDelayedWorkflow],
      providers: [StepScript],
      entities: [Order],
      imports: [HealthModule],
    });
  });

  afterAll(() => harness?.close());

  const ready = (query = '') => request(harness.app.getHttpServer()).get(`/health/ready${query}`);

  it('is up with the database, the transport and this process’s worker seen', async () => {
    const response = await ready('?maxStuckScheduled=0').expect(200);
    const body = response.body as HealthBody;
    expect(body.status).toBe('ok');
    expect(body.details['geneva-drive']).toEqual({
      status: 'up',
      problems: [],
      database: 'up',
      transport: 'up',
      // On a Redis Cluster BullMQ lists the clients of the one node it asks, which need not be the
      // node this worker's connections are on.
      queues: [{ queue: 'geneva-drive', workers: testRedisCluster ? expect.any(Number) : 1 }],
      stuckScheduled: 0,
      waitingOverdue: 0,
    });
  });

  it('is down (503) once more scheduled steps are overdue than the limit, up again under a higher one', async () => {
    const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    const workflow = await harness.get(WorkflowService).start(HousekeepingDelayedWorkflow, {
      hero: order,
    });
    const execution = await harness.service.currentExecution(workflow);
    // Due two hours ago and never picked up: past the 15-minute stuck-scheduled threshold.
    await harness.dataSource
      .getRepository(StepExecutionEntity)
      .update(execution!.id, { scheduledFor: new Date(Date.now() - 2 * HOUR) });

    const down = (await ready('?maxStuckScheduled=0').expect(503)).body as HealthBody;
    expect(down.status).toBe('error');
    expect(down.details['geneva-drive']).toMatchObject({
      status: 'down',
      database: 'up',
      stuckScheduled: 1,
      problems: [expect.stringContaining('more than 0 scheduled step(s) overdue')],
    });
    await ready('?maxStuckScheduled=1').expect(200);
    await harness.service.cancel(workflow);
  });

  it('refuses a limit that is not a whole number of executions', async () => {
    await expect(
      harness.get(GenevaDriveHealthIndicator).isHealthy('geneva-drive', { maxStuckScheduled: -1 }),
    ).rejects.toThrow(/maxStuckScheduled must be a whole number/);
  });
});

// A Redis of the test's own, so it can be killed: PostgreSQL only (the transport is the subject),
// not through PgBouncer (nothing about the pooler changes what is measured), on Redis only.
describeIf(testDatabaseLabel === 'PostgreSQL' && testPooler === null && testTransport === 'redis')(
  'GenevaDriveHealthIndicator with a transport that does not answer',
  () => {
    let redis: PrivateRedis;
    let harness: EngineHarness;

    beforeAll(async () => {
      redis = await PrivateRedis.start();
      harness = await EngineHarness.boot({
        workflows: [HousekeepingDelayedWorkflow],
        providers: [StepScript],
        entities: [Order],
        imports: [HealthModule],
        options: { connection: { host: '127.0.0.1', port: redis.port } },
      });
    });

    afterAll(async () => {
      redis?.thaw();
      await harness?.closeApp();
      await redis?.stop();
    });

    it('is down (503) naming the transport while Redis does not answer, up once it does', async () => {
      await readyOf(harness).expect(200);
      // A hung Redis (SIGSTOP): connections stay open and nothing answers.
      redis.freeze();
      const body = (await readyOf(harness).expect(503)).body as HealthBody;
      expect(body.details['geneva-drive']).toMatchObject({
        status: 'down',
        database: 'up',
        transport: 'down',
        problems: [
          expect.stringMatching(/^transport: the transport did not answer within 2000 ms/),
        ],
      });
      redis.thaw();
      await readyOf(harness).expect(200);
    });
  },
);

function readyOf(harness: EngineHarness) {
  return request(harness.app.getHttpServer()).get('/health/ready');
}
