import { randomBytes, randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Queue } from 'bullmq';
import request from 'supertest';
import type { App } from 'supertest/types';
import type { WorkflowState } from 'nestjs-geneva-drive';
import {
  parseRedisUrl,
  SAMPLE_APP_CONFIG,
  type SampleAppConfig,
} from '../../sample-app/src/config';
import { dropSchema } from '../../sample-app/src/database';

/** What `GET /workflows/:id` returns, as JSON. */
interface WorkflowView {
  workflow: { id: string; state: WorkflowState; nextStepName: string | null; heroId: string };
  timeline: Array<{
    step: string;
    state: string;
    outcome: string | null;
    scheduledFor: string;
    startedAt: string | null;
    finishedAt: string | null;
    error: { class: string; message: string | null } | null;
  }>;
}

const STEPS = ['reserveStock', 'capturePayment', 'ship', 'requestReview'];
const SHIP_WAIT_MS = 200;

/**
 * Boots the sample app's real AppModule against the local PostgreSQL and Redis, in a throwaway
 * schema and BullMQ prefix, and drives orders through their workflow over HTTP.
 */
describe('sample app (HTTP, PostgreSQL + BullMQ)', () => {
  const suffix = randomBytes(4).toString('hex');
  const schema = `sample_app_test_${suffix}`;
  const redisPrefix = `sample-app-test-${suffix}`;
  const savedEnv = {
    SHIP_WAIT: process.env.SHIP_WAIT,
    INVENTORY_RETRY_WAIT: process.env.INVENTORY_RETRY_WAIT,
  };
  let app: INestApplication<App> | undefined;
  let config: SampleAppConfig;

  beforeAll(async () => {
    // Step and policy waits are decorator options, read when the workflow class is defined: set
    // them before the app module is loaded.
    process.env.SHIP_WAIT = `${SHIP_WAIT_MS}ms`;
    process.env.INVENTORY_RETRY_WAIT = '50ms';
    const { AppModule } = await import('../../sample-app/src/app.module');
    const moduleRef = await Test.createTestingModule({
      imports: [AppModule.forRoot({ schema, redisPrefix })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: ['error'] });
    await app.init();
    config = app.get<SampleAppConfig>(SAMPLE_APP_CONFIG);
  });

  afterAll(async () => {
    await app?.close();
    if (config) {
      const queue = new Queue('geneva-drive', {
        connection: parseRedisUrl(config.redisUrl),
        prefix: redisPrefix,
      });
      await queue.obliterate({ force: true });
      await queue.close();
      await dropSchema(config.databaseUrl, schema);
    }
    for (const [key, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  function http() {
    return request(app!.getHttpServer());
  }

  async function createOrder(amountCents = 4200) {
    const response = await http()
      .post('/orders')
      .send({ email: 'ada@example.com', amountCents })
      .expect(201);
    return response.body as {
      order: { id: number; status: string };
      workflow: { id: string; state: string };
    };
  }

  async function view(id: string): Promise<WorkflowView> {
    return (await http().get(`/workflows/${id}`).expect(200)).body as WorkflowView;
  }

  /** Polls `GET /workflows/:id` until `predicate` holds: BullMQ runs the steps in the background. */
  async function waitFor(
    id: string,
    predicate: (view: WorkflowView) => boolean,
    timeoutMs = 10_000,
  ) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const current = await view(id);
      if (predicate(current)) return current;
      if (Date.now() > deadline) {
        throw new Error(
          `Timed out waiting for workflow ${id}; last seen: ${JSON.stringify(current)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  const inState = (id: string, state: WorkflowState) =>
    waitFor(id, (v) => v.workflow.state === state);
  const rows = (v: WorkflowView) =>
    v.timeline.map((entry) => [entry.step, entry.state, entry.outcome]);

  it('POST /orders starts the fulfillment workflow, which runs every step in order', async () => {
    const { order, workflow } = await createOrder(4200);
    expect(order.status).toBe('new');
    expect(workflow.state).toBe('ready');

    const done = await inState(workflow.id, 'finished');
    expect(done.workflow.heroId).toBe(String(order.id));
    expect(done.workflow.nextStepName).toBeNull();
    expect(rows(done)).toEqual(STEPS.map((step) => [step, 'completed', 'success']));
    for (const entry of done.timeline) {
      expect(entry.error).toBeNull();
      expect(Date.parse(entry.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(entry.startedAt!));
    }
    // `ship` has `wait: SHIP_WAIT`: it was scheduled that long after payment, and ran no earlier.
    const [, capture, ship] = done.timeline;
    expect(Date.parse(ship.scheduledFor) - Date.parse(capture.finishedAt!)).toBeGreaterThanOrEqual(
      SHIP_WAIT_MS - 5,
    );
    expect(Date.parse(ship.startedAt!)).toBeGreaterThanOrEqual(Date.parse(ship.scheduledFor));

    const shown = await http().get(`/orders/${order.id}`).expect(200);
    expect(shown.body.order.status).toBe('shipped');
    expect(shown.body.order.trackingNumber).toMatch(/^TRK-/);
    expect(shown.body.workflow.id).toBe(workflow.id);
  });

  it('skips the review request of a small order (skipIf)', async () => {
    const { workflow } = await createOrder(500);
    const done = await inState(workflow.id, 'finished');
    expect(rows(done)).toEqual([
      ['reserveStock', 'completed', 'success'],
      ['capturePayment', 'completed', 'success'],
      ['ship', 'completed', 'success'],
      ['requestReview', 'skipped', 'skipped'],
    ]);
  });

  it('reattempts transient inventory errors (step-level policy) and then carries on', async () => {
    await http().post('/inventory/outage').send({ failures: 2 }).expect(200);
    const { workflow } = await createOrder();
    const done = await inState(workflow.id, 'finished');
    expect(rows(done)).toEqual([
      ['reserveStock', 'completed', 'reattempted'],
      ['reserveStock', 'completed', 'reattempted'],
      ...STEPS.map((step) => [step, 'completed', 'success']),
    ]);
    expect(done.timeline.slice(0, 2).map((entry) => entry.error?.class)).toEqual([
      'TransientInventoryError',
      'TransientInventoryError',
    ]);
  });

  it('cancels the workflow when stock runs out (class-level policy)', async () => {
    await http().post('/inventory/stock').send({ available: 0 }).expect(200);
    try {
      const { workflow } = await createOrder();
      const done = await inState(workflow.id, 'canceled');
      expect(rows(done)).toEqual([['reserveStock', 'failed', 'canceled']]);
      expect(done.timeline[0].error).toEqual({
        class: 'OutOfStockError',
        message: expect.stringContaining('No stock left') as string,
      });
    } finally {
      await http().post('/inventory/stock').send({ available: 1000 }).expect(200);
    }
  });

  it('pauses and resumes a workflow over HTTP', async () => {
    const { workflow } = await createOrder();
    // `ship` waits SHIP_WAIT after payment, so the workflow is still ongoing when this arrives.
    const paused = await http().post(`/workflows/${workflow.id}/pause`).expect(200);
    // A ready workflow pauses at once; a performing one at the end of its running step.
    expect(['paused', 'performing']).toContain(paused.body.state);
    await inState(workflow.id, 'paused');

    // Nothing moves while paused, not even once the delayed `ship` job comes due.
    await new Promise((resolve) => setTimeout(resolve, SHIP_WAIT_MS * 2));
    const stillPaused = await view(workflow.id);
    expect(stillPaused.workflow.state).toBe('paused');
    expect(
      stillPaused.timeline.some((entry) => entry.step === 'ship' && entry.state === 'completed'),
    ).toBe(false);
    expect(stillPaused.timeline.some((entry) => entry.step === 'requestReview')).toBe(false);

    const resumed = await http().post(`/workflows/${workflow.id}/resume`).expect(200);
    expect(['ready', 'performing']).toContain(resumed.body.state);
    const done = await inState(workflow.id, 'finished');
    const completed = done.timeline
      .filter((entry) => entry.state === 'completed')
      .map((entry) => entry.step);
    expect(completed).toEqual(STEPS);
  });

  it('answers 409 to a verb the workflow state does not allow', async () => {
    const { workflow } = await createOrder();
    await http()
      .post(`/workflows/${workflow.id}/resume`)
      .expect(409)
      .expect(({ body }) => {
        expect(body.error).toBe('InvalidStateError');
        expect(body.message).toMatch(/Cannot resume a (ready|performing) workflow/);
      });
    await inState(workflow.id, 'finished');
    const resume = await http().post(`/workflows/${workflow.id}/resume`).expect(409);
    expect(resume.body.message).toContain('Cannot resume a finished workflow');
    await http().post(`/workflows/${workflow.id}/pause`).expect(409);
    await http().post(`/workflows/${workflow.id}/skip`).expect(409);
    await http().post(`/workflows/${workflow.id}/cancel`).expect(409);
  });

  it('answers 404 for an unknown workflow id', async () => {
    const unknown = randomUUID();
    await http().get(`/workflows/${unknown}`).expect(404);
    await http().get('/workflows/not-a-uuid').expect(404);
    for (const verb of ['pause', 'resume', 'skip', 'cancel']) {
      const response = await http().post(`/workflows/${unknown}/${verb}`).expect(404);
      expect(response.body.error).toBe('WorkflowNotFoundError');
    }
  });

  it('voiding the order cancels its workflow through @CancelIf', async () => {
    const { order, workflow } = await createOrder();
    const voided = await http().post(`/orders/${order.id}/void`).expect(200);
    expect(voided.body.order.status).toBe('void');

    const done = await inState(workflow.id, 'canceled');
    const last = done.timeline.at(-1)!;
    expect([last.state, last.outcome]).toEqual(['canceled', 'canceled']);
    expect(
      done.timeline.some((entry) => entry.step === 'ship' && entry.state === 'completed'),
    ).toBe(false);
    const shown = await http().get(`/orders/${order.id}`).expect(200);
    expect(shown.body.order.status).toBe('void');
  });

  it('lists workflows newest first, filtered by state, and rejects bad filters with 400', async () => {
    const first = await createOrder();
    const second = await createOrder();
    await inState(first.workflow.id, 'finished');
    await inState(second.workflow.id, 'finished');

    const listed = await http()
      .get('/workflows')
      .query({ state: 'finished', limit: 200 })
      .expect(200);
    const ids = (listed.body as Array<{ id: string; state: string }>).map((w) => w.id);
    expect(ids.indexOf(second.workflow.id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(second.workflow.id)).toBeLessThan(ids.indexOf(first.workflow.id));
    expect((listed.body as Array<{ state: string }>).every((w) => w.state === 'finished')).toBe(
      true,
    );

    const canceled = await http().get('/workflows').query({ state: 'canceled' }).expect(200);
    expect((canceled.body as Array<{ id: string }>).map((w) => w.id)).not.toContain(
      first.workflow.id,
    );

    await http().get('/workflows').query({ state: 'bogus' }).expect(400);
    const unknownType = await http().get('/workflows').query({ workflow: 'Nope' }).expect(400);
    expect(unknownType.body.error).toBe('StepConfigurationError');
    await http().post('/orders').send({ email: 'not-an-email', amountCents: 0 }).expect(400);
  });
});
