import {
  Body,
  Controller,
  Get,
  Module,
  NotFoundException,
  Param,
  Post,
  type INestApplication,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import request from 'supertest';
import { DataSource } from 'typeorm';
import {
  CursorTooLargeError,
  GenevaDriveExceptionFilter,
  MissingMigrationError,
  WorkflowService,
} from '../../lib';
import { Order } from '../fixtures/order.entity';
import { PaymentWorkflow } from '../fixtures/signal.workflows';
import { StepScript } from '../fixtures/step-script';
import { testDatabaseLabel } from './support/database';
import { EngineHarness } from './support/engine-harness';

/** What a NestJS app's controller does with WorkflowService: ids and names from the request. */
@Controller('workflows')
class WorkflowsController {
  constructor(
    private readonly workflows: WorkflowService,
    private readonly dataSource: DataSource,
  ) {}

  @Post('start/:name/:orderId')
  async start(@Param('name') name: string, @Param('orderId') orderId: string) {
    const hero = await this.dataSource
      .getRepository(Order)
      .findOneByOrFail({ id: Number(orderId) });
    return this.workflows.start(name, { hero });
  }

  @Post(':id/pause') pause(@Param('id') id: string) {
    return this.workflows.pause(id);
  }

  @Post(':id/resume') resume(@Param('id') id: string) {
    return this.workflows.resume(id);
  }

  @Post(':id/resume-at/:step') resumeAt(@Param('id') id: string, @Param('step') step: string) {
    return this.workflows.resumeAt(id, step);
  }

  @Post(':id/cancel') cancel(@Param('id') id: string) {
    return this.workflows.cancel(id);
  }

  @Post(':id/signals/:name')
  signal(
    @Param('id') id: string,
    @Param('name') name: string,
    @Body() body: { payload?: unknown; padding?: number },
  ) {
    // `padding` builds a payload larger than Express's own 100 kB body limit would let through.
    const payload = body.padding === undefined ? body.payload : { note: 'x'.repeat(body.padding) };
    return this.workflows.signal(id, name, { payload });
  }

  @Get('faults/migration') missingMigration(): never {
    throw new MissingMigrationError('the signals migration has not run');
  }

  @Get('faults/cursor') cursorTooLarge(): never {
    throw new CursorTooLargeError('cursor of 70000 bytes');
  }

  @Get('faults/http') notFound(): never {
    throw new NotFoundException('no such page');
  }
}

@Module({
  controllers: [WorkflowsController],
  providers: [{ provide: APP_FILTER, useClass: GenevaDriveExceptionFilter }],
})
class HttpModule {}

describe(`GenevaDriveExceptionFilter (${testDatabaseLabel})`, () => {
  let harness: EngineHarness;
  let http: INestApplication['getHttpServer'] extends () => infer S ? S : never;
  let orderIds: number[];

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [PaymentWorkflow],
      providers: [StepScript],
      entities: [Order],
      imports: [HttpModule],
    });
    http = harness.app.getHttpServer();
    const orders = await harness.dataSource
      .getRepository(Order)
      .save([{ status: 'new' }, { status: 'new' }, { status: 'new' }]);
    orderIds = orders.map((order) => order.id);
  });

  afterAll(() => harness?.close());

  /** A PaymentWorkflow parked at its `capture` step (it waits for `payment`). */
  async function startedWorkflow(orderId: number): Promise<string> {
    const started = await request(http)
      .post(`/workflows/start/PaymentWorkflow/${orderId}`)
      .expect(201);
    return (started.body as { id: string }).id;
  }

  const expectBody = (
    body: unknown,
    statusCode: number,
    error: string,
    message: string | RegExp,
  ): void => {
    expect(body).toEqual({ statusCode, error, message: expect.stringMatching(message) });
    expect(Object.keys(body as object).sort()).toEqual(['error', 'message', 'statusCode']);
  };

  it('answers an unknown workflow id with 404 WorkflowNotFoundError', async () => {
    const response = await request(http)
      .post('/workflows/0190f4a2-0000-7000-8000-000000000000/pause')
      .expect(404);
    expectBody(response.body, 404, 'WorkflowNotFoundError', /0190f4a2-0000-7000-8000-000000000000/);
  });

  it('answers a verb the state does not allow with 409 InvalidStateError', async () => {
    const id = await startedWorkflow(orderIds[0]);
    const response = await request(http).post(`/workflows/${id}/resume`).expect(409);
    expectBody(response.body, 409, 'InvalidStateError', /only paused ones/);
    await request(http).post(`/workflows/${id}/cancel`).expect(201);
  });

  it('answers a second start for the same hero with 409 WorkflowAlreadyOngoingError', async () => {
    const id = await startedWorkflow(orderIds[1]);
    const response = await request(http)
      .post(`/workflows/start/PaymentWorkflow/${orderIds[1]}`)
      .expect(409);
    expectBody(response.body, 409, 'WorkflowAlreadyOngoingError', /PaymentWorkflow/);
    await request(http).post(`/workflows/${id}/cancel`).expect(201);
  });

  it('answers a signal to a finished workflow with 409 WorkflowNotOngoingError', async () => {
    const id = await startedWorkflow(orderIds[2]);
    await request(http).post(`/workflows/${id}/cancel`).expect(201);
    const response = await request(http)
      .post(`/workflows/${id}/signals/payment`)
      .send({ payload: { amount: 5 } })
      .expect(409);
    expectBody(response.body, 409, 'WorkflowNotOngoingError', /payment/);
  });

  it('answers resumeAt towards a step the class does not define with 409 StepNotDefinedError', async () => {
    const id = await startedWorkflow(orderIds[0]);
    await request(http).post(`/workflows/${id}/pause`).expect(201);
    const response = await request(http).post(`/workflows/${id}/resume-at/refund`).expect(409);
    expectBody(response.body, 409, 'StepNotDefinedError', /'refund'/);
    await request(http).post(`/workflows/${id}/cancel`).expect(201);
  });

  it('answers a blank signal name with 400 InvalidArgumentError', async () => {
    const id = await startedWorkflow(orderIds[0]);
    const response = await request(http)
      .post(`/workflows/${id}/signals/%20`)
      .send({ payload: {} })
      .expect(400);
    expectBody(response.body, 400, 'InvalidArgumentError', /name/);
    await request(http).post(`/workflows/${id}/cancel`).expect(201);
  });

  it('answers a workflow name nobody registered with 400 StepConfigurationError', async () => {
    const response = await request(http)
      .post(`/workflows/start/NoSuchWorkflow/${orderIds[0]}`)
      .expect(400);
    expectBody(response.body, 400, 'StepConfigurationError', /NoSuchWorkflow/);
  });

  it('answers a signal payload above the limit with 413 SignalPayloadTooLargeError', async () => {
    const id = await startedWorkflow(orderIds[0]);
    const response = await request(http)
      .post(`/workflows/${id}/signals/payment`)
      .send({ padding: 200_000 })
      .expect(413);
    expectBody(response.body, 413, 'SignalPayloadTooLargeError', /bytes/);
    const signals = await harness.service.signals(id);
    expect(signals).toEqual([]);
    await request(http).post(`/workflows/${id}/cancel`).expect(201);
  });

  it("gives server-side library errors Nest's own 500 answer, without their message", async () => {
    for (const path of ['/workflows/faults/migration', '/workflows/faults/cursor']) {
      const response = await request(http).get(path).expect(500);
      expect(response.body).toEqual({ statusCode: 500, message: 'Internal server error' });
    }
  });

  it('leaves errors that are not the library’s to Nest', async () => {
    const response = await request(http).get('/workflows/faults/http').expect(404);
    expect(response.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'no such page' });
  });
});
