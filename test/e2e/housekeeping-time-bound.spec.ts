import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  GENEVA_DRIVE_ENTITIES,
  GENEVA_DRIVE_MIGRATIONS,
  HousekeepingService,
  StepExecutionEntity,
  WorkflowService,
} from 'nestjs-geneva-drive';
import { GenevaDriveTestingModule } from 'nestjs-geneva-drive/testing';
import {
  HOUSEKEEPING_WORKFLOWS,
  HousekeepingDelayedWorkflow,
} from '../fixtures/housekeeping.workflows';
import { Order } from '../fixtures/order.entity';
import { IterationScript } from '../fixtures/resumable.workflows';
import { StepScript } from '../fixtures/step-script';

const ROWS = 20;

/**
 * `housekeeping.maxRunDuration`: a run stops after the batch in hand once its time is up, so one
 * run stays bounded whatever the size of the tables. With 1 ms and batches of one row, a run
 * cannot get through 20 overdue rows.
 */
describe('housekeeping maxRunDuration', () => {
  let app: INestApplication;
  const warnings: string[] = [];
  const logger: LoggerService = {
    log: () => undefined,
    error: () => undefined,
    warn: (message: unknown) => warnings.push(String(message)),
  };

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        TypeOrmModule.forRoot({
          type: 'better-sqlite3',
          database: ':memory:',
          entities: [...GENEVA_DRIVE_ENTITIES, Order],
          migrations: GENEVA_DRIVE_MIGRATIONS,
          migrationsRun: true,
          synchronize: true,
        }),
        GenevaDriveTestingModule.forRoot({
          logger,
          housekeeping: { batchSize: 1, maxRunDuration: 1 },
        }),
      ],
      providers: [...HOUSEKEEPING_WORKFLOWS, StepScript, IterationScript],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(() => app?.close());

  it('a run stops at its time bound with work left, and says so', async () => {
    const dataSource = app.get(DataSource);
    const service = app.get(WorkflowService);
    for (let i = 0; i < ROWS; i++) {
      await service.start(HousekeepingDelayedWorkflow, {
        hero: await dataSource.getRepository(Order).save({ status: 'new' }),
      });
    }
    await dataSource
      .getRepository(StepExecutionEntity)
      .update({ state: 'scheduled' }, { scheduledFor: new Date(Date.now() - 3_600_000) });
    const { stuckScheduledRecovered } = await app.get(HousekeepingService).run();
    expect(stuckScheduledRecovered).toBeLessThan(ROWS);
    expect(warnings.some((message) => message.includes('Stopped at maxRunDuration'))).toBe(true);
  });
});
