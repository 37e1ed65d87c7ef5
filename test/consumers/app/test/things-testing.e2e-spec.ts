import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  GENEVA_DRIVE_ENTITIES,
  GENEVA_DRIVE_MIGRATIONS,
  WorkflowService,
} from 'nestjs-geneva-drive';
import { GenevaDriveTestingModule, WorkflowTestHelper } from 'nestjs-geneva-drive/testing';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { Thing } from '../src/things/thing.entity';
import { ThingsModule } from '../src/things/things.module';

describe('POST /things with GenevaDriveTestingModule (SQLite in memory, no Redis)', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'better-sqlite3',
          database: ':memory:',
          entities: [...GENEVA_DRIVE_ENTITIES, Thing],
          migrations: [...GENEVA_DRIVE_MIGRATIONS],
          migrationsRun: true,
          synchronize: true, // the app's own table; the library's come from its migrations
        }),
        GenevaDriveTestingModule.forRoot(),
        ThingsModule,
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  }, 30_000);

  afterAll(async () => {
    await app?.close();
  });

  it('starts ThingWorkflow through the controller and drives it to finished', async () => {
    const response = await request(app.getHttpServer())
      .post('/things')
      .send({ name: 'lamp' })
      .expect(201);
    const { thingId, workflowId } = response.body as { thingId: number; workflowId: string };
    const helper = app.get(WorkflowTestHelper);

    await helper.assertWorkflowState(workflowId, 'ready');
    await helper.performNextStep(workflowId);
    await helper.assertStepExecuted(workflowId, 'inspect', { state: 'completed' });
    const finished = await helper.speedrunWorkflow(workflowId);

    expect(finished.state).toBe('finished');
    await helper.assertWorkflowState(workflowId, 'finished');
    const history = await app.get(WorkflowService).executionHistory(workflowId);
    expect(history.map((execution) => execution.stepName)).toEqual(['inspect', 'paint', 'ship']);
    const thing = await app.get(DataSource).getRepository(Thing).findOneByOrFail({ id: thingId });
    expect(thing.trail).toBe('inspect,paint,ship');
  });
});
