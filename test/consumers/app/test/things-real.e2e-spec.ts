import { randomBytes } from 'node:crypto';
import * as diagnosticsChannel from 'node:diagnostics_channel';
import type { INestApplication } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Queue } from 'bullmq';
import {
  GENEVA_DRIVE_ENTITIES,
  GENEVA_DRIVE_MIGRATIONS,
  GenevaDriveModule,
  WorkflowService,
  type GenevaDriveDiagnosticsEvent,
} from 'nestjs-geneva-drive';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Thing } from '../src/things/thing.entity';
import { ThingsModule } from '../src/things/things.module';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS = {
  host: process.env.REDIS_HOST ?? '127.0.0.1',
  port: Number(process.env.REDIS_PORT ?? 6379),
};
// PostgreSQL and Redis are shared: a schema and a BullMQ prefix of this run's own.
const RUN = randomBytes(4).toString('hex');
const SCHEMA = `consumer_app_${RUN}`;
const PREFIX = `consumer-app-${RUN}`;

async function onAdminConnection(statement: string): Promise<void> {
  const admin = await new DataSource({ type: 'postgres', url: DATABASE_URL }).initialize();
  try {
    await admin.query(statement);
  } finally {
    await admin.destroy();
  }
}

/** Resolves with the workflow's state once a step's finalize leaves it finished, canceled or paused. */
function settled(workflowId: Promise<string>): Promise<string> {
  return new Promise((resolve) => {
    const seen = new Map<string, string>();
    const onFinalize = (message: unknown): void => {
      const event = message as GenevaDriveDiagnosticsEvent;
      if (event.workflowState && ['finished', 'canceled', 'paused'].includes(event.workflowState))
        seen.set(event.workflowId, event.workflowState);
      void check();
    };
    const check = async (): Promise<void> => {
      const state = seen.get(await workflowId);
      if (state === undefined) return;
      diagnosticsChannel.unsubscribe('geneva-drive:finalize', onFinalize);
      resolve(state);
    };
    diagnosticsChannel.subscribe('geneva-drive:finalize', onFinalize);
    void workflowId.then(check);
  });
}

describe('POST /things with GenevaDriveModule (PostgreSQL and Redis)', () => {
  let app: INestApplication;

  beforeAll(async () => {
    await onAdminConnection(`CREATE SCHEMA "${SCHEMA}"`);
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: DATABASE_URL,
          schema: SCHEMA,
          entities: [...GENEVA_DRIVE_ENTITIES, Thing],
          migrations: [...GENEVA_DRIVE_MIGRATIONS],
          migrationsRun: true,
          synchronize: true, // the app's own table; the library's come from its migrations
        }),
        GenevaDriveModule.forRoot({ connection: REDIS, prefix: PREFIX }),
        ThingsModule,
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error', 'warn'] });
    await app.init();
  }, 30_000);

  afterAll(async () => {
    await app?.close();
    const queue = new Queue('geneva-drive', { connection: REDIS, prefix: PREFIX });
    await queue.obliterate({ force: true });
    await queue.close();
    await onAdminConnection(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
  }, 30_000);

  it('starts ThingWorkflow through the controller; the BullMQ worker runs it to finished', async () => {
    let started!: (id: string) => void;
    const workflowId = new Promise<string>((resolve) => (started = resolve));
    const outcome = settled(workflowId);

    const response = await request(app.getHttpServer())
      .post('/things')
      .send({ name: 'lamp' })
      .expect(201);
    const body = response.body as { thingId: number; workflowId: string };
    started(body.workflowId);

    expect(await outcome).toBe('finished');
    const history = await app.get(WorkflowService).executionHistory(body.workflowId);
    expect(history.map((execution) => execution.stepName)).toEqual(['inspect', 'paint', 'ship']);
    const thing = await app
      .get(DataSource)
      .getRepository(Thing)
      .findOneByOrFail({ id: body.thingId });
    expect(thing.trail).toBe('inspect,paint,ship');
  }, 30_000);
});
