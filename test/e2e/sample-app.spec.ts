import { randomBytes, randomUUID } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Queue, createPostgresBackend } from 'bullmq';
import request from 'supertest';
import { DataSource } from 'typeorm';
import type { App } from 'supertest/types';
import type { WorkflowState } from 'nestjs-geneva-drive';
import { CampaignMailer } from '../../sample-app/src/campaigns/campaign-mailer.service';
import {
  parseRedisUrl,
  SAMPLE_APP_CONFIG,
  type SampleAppConfig,
} from '../../sample-app/src/config';
import { dropSchema } from '../../sample-app/src/database';
import { bullmqSchemaFor } from '../../lib/adapters/bullmq-postgres/postgres-transport.connection';
import { testDatabase, testPooler } from './support/database';
import { describeIf } from './support/describe-if';
import { testRedisCluster } from './support/redis';

/** One step execution of `GET /workflows/:id`, as JSON. */
interface TimelineRow {
  step: string;
  state: string;
  outcome: string | null;
  scheduledFor: string;
  startedAt: string | null;
  finishedAt: string | null;
  waitingSince: string | null;
  signalId: string | null;
  cursor: unknown;
  error: { class: string; message: string | null } | null;
}

/** What `GET /workflows/:id` returns, as JSON. */
interface WorkflowView {
  workflow: { id: string; state: WorkflowState; nextStepName: string | null; heroId: string };
  timeline: TimelineRow[];
  signals: Array<{
    id: string;
    name: string;
    idempotencyKey: string | null;
    state: string;
    payload: unknown;
    claimed: number;
    consumed: number;
  }>;
}

/** What `POST /webhooks/payments` returns. */
interface SignalReply {
  id: string;
  name: string;
  state: string;
  duplicateDelivery: boolean;
  workflowId: string;
}

/** What `GET /campaigns/:id` returns, as JSON. */
interface CampaignView {
  campaign: { id: number; status: string; subscriberCount: number; deliveredCount: number | null };
  workflow: { id: string; state: WorkflowState } | null;
  progress: {
    subscribers: number;
    delivered: number;
    cursor: number | null;
    chainLength: number;
    current: { step: string; state: string } | null;
  };
}

const STEPS = ['reserveStock', 'capturePayment', 'ship', 'requestReview'];
const SHIP_WAIT_MS = 200;
const CAMPAIGN_MAX_ITERATIONS = 500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Boots the sample app's real AppModule against the local PostgreSQL and Redis (or, with
 * GENEVA_TRANSPORT=postgres, PostgreSQL alone), in a throwaway schema and BullMQ prefix, and drives
 * orders and campaigns through their workflows over HTTP.
 */
// The app's PostgreSQL setup (DATABASE_URL), so the MariaDB and SQLite e2e runs skip it; its
// default setup (SQLite file, local transport) is sample-app-embedded.spec.ts's. It connects
// to one Redis by URL (REDIS_URL), so the Redis Cluster run skips it too. BullMQ on PostgreSQL
// needs sessions a transaction pooler does not keep, and BullMQ 6 (not the oldest-stack run's 5).
describe.each([
  ['redis', 'BullMQ on Redis'],
  ['postgres', 'BullMQ on PostgreSQL, no Redis'],
] as const)('sample app, GENEVA_TRANSPORT=%s', (transport, label) =>
  describeIf(
    testDatabase === 'postgres' &&
      testRedisCluster === null &&
      (transport === 'redis' ||
        (testPooler === null && typeof createPostgresBackend === 'function')),
  )(`sample app (HTTP, PostgreSQL + ${label})`, () => {
    const suffix = randomBytes(4).toString('hex');
    const schema = `sample_app_test_${suffix}`;
    const redisPrefix = `sample-app-test-${suffix}`;
    // The app's PostgreSQL + Redis setup (without them in the environment it runs embedded).
    const databaseUrl = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
    const redisUrl = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
    const savedEnv = {
      SHIP_WAIT: process.env.SHIP_WAIT,
      INVENTORY_RETRY_WAIT: process.env.INVENTORY_RETRY_WAIT,
      CAMPAIGN_MAX_ITERATIONS: process.env.CAMPAIGN_MAX_ITERATIONS,
    };
    let app: INestApplication<App> | undefined;
    let config: SampleAppConfig;

    beforeAll(async () => {
      // Step and policy options are decorator options, read when the workflow class is defined: set
      // them before the app module is loaded.
      process.env.SHIP_WAIT = `${SHIP_WAIT_MS}ms`;
      process.env.INVENTORY_RETRY_WAIT = '50ms';
      process.env.CAMPAIGN_MAX_ITERATIONS = String(CAMPAIGN_MAX_ITERATIONS);
      const { AppModule } = await import('../../sample-app/src/app.module');
      const moduleRef = await Test.createTestingModule({
        imports: [
          AppModule.forRoot({
            schema,
            redisPrefix,
            databaseUrl,
            redisUrl: transport === 'redis' ? redisUrl : null,
            transport,
          }),
        ],
      }).compile();
      app = moduleRef.createNestApplication({ logger: ['error'] });
      await app.init();
      config = app.get<SampleAppConfig>(SAMPLE_APP_CONFIG);
    });

    afterAll(async () => {
      await app?.close();
      if (config && transport === 'redis') {
        const queue = new Queue('geneva-drive', {
          connection: parseRedisUrl(redisUrl),
          prefix: redisPrefix,
        });
        await queue.obliterate({ force: true });
        await queue.close();
      }
      if (config) {
        await dropSchema(databaseUrl, schema);
        if (transport === 'postgres') await dropSchema(databaseUrl, bullmqSchemaFor(redisPrefix));
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
        order: { id: number; status: string; amountCents: number };
        workflow: { id: string; state: string };
      };
    }

    /** The payment provider's webhook; a fresh event id unless one is given. */
    function paymentWebhook(orderId: number, amountCents: number, eventId = `evt_${randomUUID()}`) {
      return http().post('/webhooks/payments').send({ eventId, orderId, amountCents });
    }

    async function pay(
      order: { id: number; amountCents: number },
      eventId?: string,
    ): Promise<SignalReply> {
      const response = await paymentWebhook(order.id, order.amountCents, eventId).expect(200);
      return response.body.signal as SignalReply;
    }

    async function view(id: string): Promise<WorkflowView> {
      return (await http().get(`/workflows/${id}`).expect(200)).body as WorkflowView;
    }

    /** Polls until `predicate` holds: BullMQ runs the steps in the background. */
    async function poll<T>(
      describe: string,
      read: () => Promise<T>,
      predicate: (value: T) => boolean,
      timeoutMs = 10_000,
      intervalMs = 25,
    ): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const current = await read();
        if (predicate(current)) return current;
        if (Date.now() > deadline) {
          throw new Error(
            `Timed out waiting for ${describe}; last seen: ${JSON.stringify(current)}`,
          );
        }
        await sleep(intervalMs);
      }
    }

    const waitFor = (id: string, predicate: (view: WorkflowView) => boolean, timeoutMs?: number) =>
      poll(`workflow ${id}`, () => view(id), predicate, timeoutMs);
    const inState = (id: string, state: WorkflowState) =>
      waitFor(id, (v) => v.workflow.state === state);
    const rows = (v: WorkflowView) =>
      v.timeline.map((entry) => [entry.step, entry.state, entry.outcome]);
    /** The workflow is parked at `capturePayment`, waiting for the payment webhook. */
    const parkedAtCapture = (id: string) =>
      waitFor(id, (v) => {
        const last = v.timeline.at(-1);
        return last?.step === 'capturePayment' && last.state === 'waiting';
      });

    describe('orders: fulfillment waits for the payment webhook', () => {
      it('parks at capturePayment until POST /webhooks/payments, then runs every step in order', async () => {
        const { order, workflow } = await createOrder(4200);
        expect(order.status).toBe('new');
        expect(workflow.state).toBe('ready');

        const parked = await parkedAtCapture(workflow.id);
        expect(rows(parked)).toEqual([
          ['reserveStock', 'completed', 'success'],
          ['capturePayment', 'waiting', null],
        ]);
        expect(parked.workflow.state).toBe('ready');
        expect(parked.timeline[1].waitingSince).not.toBeNull();
        expect(parked.timeline[1].startedAt).toBeNull();
        // No job, no timer, no polling: nothing moves until the signal arrives.
        await sleep(150);
        expect(rows(await view(workflow.id))).toEqual(rows(parked));
        expect((await http().get(`/orders/${order.id}`).expect(200)).body).toMatchObject({
          order: { status: 'reserved' },
          payment: null,
        });

        const signal = await pay(order, 'evt_first');
        expect(signal).toEqual({
          id: expect.any(String),
          name: 'payment_confirmed',
          state: 'claimed', // it woke the parked step
          duplicateDelivery: false,
          workflowId: workflow.id,
        });

        const done = await inState(workflow.id, 'finished');
        expect(done.workflow.heroId).toBe(String(order.id));
        expect(done.workflow.nextStepName).toBeNull();
        expect(rows(done)).toEqual(STEPS.map((step) => [step, 'completed', 'success']));
        for (const entry of done.timeline) {
          expect(entry.error).toBeNull();
          expect(Date.parse(entry.finishedAt!)).toBeGreaterThanOrEqual(
            Date.parse(entry.startedAt!),
          );
        }
        const [, capture, ship] = done.timeline;
        expect(capture.signalId).toBe(signal.id);
        expect(capture.waitingSince).toBeNull();
        // `ship` has `wait: SHIP_WAIT`: it was scheduled that long after payment, and ran no earlier.
        expect(
          Date.parse(ship.scheduledFor) - Date.parse(capture.finishedAt!),
        ).toBeGreaterThanOrEqual(SHIP_WAIT_MS - 5);
        expect(Date.parse(ship.startedAt!)).toBeGreaterThanOrEqual(Date.parse(ship.scheduledFor));
        expect(done.signals).toEqual([
          expect.objectContaining({
            id: signal.id,
            name: 'payment_confirmed',
            idempotencyKey: 'evt_first',
            state: 'consumed',
            payload: { eventId: 'evt_first', amountCents: 4200 },
            claimed: 1,
            consumed: 1,
          }),
        ]);

        const shown = await http().get(`/orders/${order.id}`).expect(200);
        expect(shown.body.order.status).toBe('shipped');
        expect(shown.body.order.trackingNumber).toMatch(/^TRK-/);
        expect(shown.body.payment).toMatchObject({ amountCents: 4200, eventId: 'evt_first' });
        expect(shown.body.workflow.id).toBe(workflow.id);
      });

      it('acknowledges a redelivered webhook (same eventId) as a duplicate, and captures once', async () => {
        const { order, workflow } = await createOrder();
        await parkedAtCapture(workflow.id);
        const eventId = `evt_${randomUUID()}`;
        const first = await pay(order, eventId);
        const again = await pay(order, eventId);
        expect(first.duplicateDelivery).toBe(false);
        expect(again).toMatchObject({ id: first.id, duplicateDelivery: true });

        const done = await inState(workflow.id, 'finished');
        expect(done.timeline.filter((entry) => entry.step === 'capturePayment')).toEqual([
          expect.objectContaining({ state: 'completed', outcome: 'success', signalId: first.id }),
        ]);
        expect(done.signals).toEqual([
          expect.objectContaining({ id: first.id, state: 'consumed', claimed: 1, consumed: 1 }),
        ]);

        // The provider retries after the workflow finished: still a 200 duplicate, not an error.
        expect(await pay(order, eventId)).toMatchObject({ id: first.id, duplicateDelivery: true });
        // A new event for a finished workflow: 409.
        const late = await paymentWebhook(order.id, order.amountCents).expect(409);
        expect(late.body.error).toBe('WorkflowNotOngoingError');
        expect((await view(workflow.id)).signals).toHaveLength(1);
      });

      it('a payment for another amount does not wake capturePayment (the matcher sees the hero)', async () => {
        const { order, workflow } = await createOrder(4200);
        await parkedAtCapture(workflow.id);
        const wrong = await paymentWebhook(order.id, 999).expect(200);
        expect(wrong.body.signal).toMatchObject({ state: 'pending', duplicateDelivery: false });
        await sleep(150);
        expect((await view(workflow.id)).timeline.at(-1)).toMatchObject({
          step: 'capturePayment',
          state: 'waiting',
        });

        const right = await pay(order);
        expect(right.state).toBe('claimed');
        const done = await inState(workflow.id, 'finished');
        expect(done.signals.map((signal) => [signal.id, signal.state])).toEqual([
          [wrong.body.signal.id, 'pending'],
          [right.id, 'consumed'],
        ]);
        const shown = await http().get(`/orders/${order.id}`).expect(200);
        expect(shown.body.payment.amountCents).toBe(4200);
      });

      it('buffers a payment that arrives early; reattempts transient inventory errors meanwhile', async () => {
        // reserveStock fails twice (reattempted after 50 ms each): the webhook arrives before the
        // workflow reaches capturePayment, and the step claims the buffered signal at its gate.
        await http().post('/inventory/outage').send({ failures: 2 }).expect(200);
        const { order, workflow } = await createOrder();
        const early = await pay(order);
        expect(early.state).toBe('pending');

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
        const capture = done.timeline.find((entry) => entry.step === 'capturePayment')!;
        expect(capture.signalId).toBe(early.id);
        expect(capture.waitingSince).toBeNull();
        expect(done.signals.map((signal) => signal.state)).toEqual(['consumed']);
      });

      it('skips the review request of a small order (skipIf)', async () => {
        const { order, workflow } = await createOrder(500);
        await pay(order);
        const done = await inState(workflow.id, 'finished');
        expect(rows(done)).toEqual([
          ['reserveStock', 'completed', 'success'],
          ['capturePayment', 'completed', 'success'],
          ['ship', 'completed', 'success'],
          ['requestReview', 'skipped', 'skipped'],
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

      it('a paused workflow buffers the payment, and nothing moves until resume', async () => {
        const { order, workflow } = await createOrder();
        await parkedAtCapture(workflow.id);
        const paused = await http().post(`/workflows/${workflow.id}/pause`).expect(200);
        expect(paused.body.state).toBe('paused');

        const buffered = await pay(order);
        expect(buffered.state).toBe('pending');
        await sleep(150);
        const still = await view(workflow.id);
        expect(still.workflow.state).toBe('paused');
        expect(still.timeline.at(-1)).toMatchObject({ step: 'capturePayment', state: 'waiting' });

        // resume() runs the rendezvous again: the buffered signal wakes capturePayment.
        const resumed = await http().post(`/workflows/${workflow.id}/resume`).expect(200);
        expect(['ready', 'performing']).toContain(resumed.body.state);
        await waitFor(workflow.id, (v) =>
          v.timeline.some((entry) => entry.step === 'ship' && entry.state === 'scheduled'),
        );

        // Paused again while `ship` waits SHIP_WAIT: nothing moves, not even once its delayed job
        // comes due.
        await http().post(`/workflows/${workflow.id}/pause`).expect(200);
        await inState(workflow.id, 'paused');
        await sleep(SHIP_WAIT_MS * 2);
        const stillPaused = await view(workflow.id);
        expect(stillPaused.workflow.state).toBe('paused');
        expect(
          stillPaused.timeline.some(
            (entry) => entry.step === 'ship' && entry.state === 'completed',
          ),
        ).toBe(false);
        expect(stillPaused.timeline.some((entry) => entry.step === 'requestReview')).toBe(false);

        await http().post(`/workflows/${workflow.id}/resume`).expect(200);
        const done = await inState(workflow.id, 'finished');
        const completed = done.timeline
          .filter((entry) => entry.state === 'completed')
          .map((entry) => entry.step);
        expect(completed).toEqual(STEPS);
        expect(done.signals).toEqual([
          expect.objectContaining({ id: buffered.id, state: 'consumed' }),
        ]);
      });

      it('answers 409 to a verb the workflow state does not allow', async () => {
        const { order, workflow } = await createOrder();
        await http()
          .post(`/workflows/${workflow.id}/resume`)
          .expect(409)
          .expect(({ body }) => {
            expect(body.error).toBe('InvalidStateError');
            expect(body.message).toMatch(/Cannot resume a (ready|performing) workflow/);
          });
        await pay(order);
        await inState(workflow.id, 'finished');
        const resume = await http().post(`/workflows/${workflow.id}/resume`).expect(409);
        expect(resume.body.message).toContain('Cannot resume a finished workflow');
        await http().post(`/workflows/${workflow.id}/pause`).expect(409);
        await http().post(`/workflows/${workflow.id}/skip`).expect(409);
        await http().post(`/workflows/${workflow.id}/cancel`).expect(409);
      });

      it('answers 404 for an unknown workflow id or order, and 400 for a malformed webhook', async () => {
        const unknown = randomUUID();
        await http().get(`/workflows/${unknown}`).expect(404);
        await http().get('/workflows/not-a-uuid').expect(404);
        for (const verb of ['pause', 'resume', 'skip', 'cancel']) {
          const response = await http().post(`/workflows/${unknown}/${verb}`).expect(404);
          expect(response.body.error).toBe('WorkflowNotFoundError');
        }
        await paymentWebhook(987654, 100).expect(404);
        await http().post('/webhooks/payments').send({ orderId: 1, amountCents: 100 }).expect(400);
        await http()
          .post('/webhooks/payments')
          .send({ eventId: '', orderId: 1, amountCents: 100 })
          .expect(400);
        await http()
          .post('/webhooks/payments')
          .send({ eventId: 'evt', orderId: 1, amountCents: 0, extra: true })
          .expect(400);
      });

      it('voiding an order parked at capturePayment cancels its workflow; a late payment gets 409', async () => {
        const { order, workflow } = await createOrder();
        await parkedAtCapture(workflow.id);
        const voided = await http().post(`/orders/${order.id}/void`).expect(200);
        expect(voided.body.order.status).toBe('void');
        expect(voided.body.workflow.state).toBe('canceled');

        const done = await view(workflow.id);
        expect(rows(done)).toEqual([
          ['reserveStock', 'completed', 'success'],
          ['capturePayment', 'canceled', 'canceled'],
        ]);
        const late = await paymentWebhook(order.id, order.amountCents).expect(409);
        expect(late.body.error).toBe('WorkflowNotOngoingError');
        expect((await http().get(`/orders/${order.id}`).expect(200)).body.payment).toBeNull();
      });

      it('voiding an order right away cancels its workflow before capture (@CancelIf)', async () => {
        const { order, workflow } = await createOrder();
        const voided = await http().post(`/orders/${order.id}/void`).expect(200);
        expect(voided.body.order.status).toBe('void');

        const done = await inState(workflow.id, 'canceled');
        const last = done.timeline.at(-1)!;
        expect([last.state, last.outcome]).toEqual(['canceled', 'canceled']);
        expect(
          done.timeline.some(
            (entry) => entry.step === 'capturePayment' && entry.state === 'completed',
          ),
        ).toBe(false);
        const shown = await http().get(`/orders/${order.id}`).expect(200);
        expect(shown.body.order.status).toBe('void');
      });

      it('lists workflows newest first, filtered by state, and rejects bad filters with 400', async () => {
        const first = await createOrder();
        const second = await createOrder();
        await pay(first.order);
        await pay(second.order);
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

    describe('operators: the dashboard at /geneva-drive', () => {
      it('lists a parked order workflow by hero and wait, and pauses it through the confirmation form', async () => {
        const { order, workflow } = await createOrder();
        await parkedAtCapture(workflow.id);
        const agent = request.agent(app!.getHttpServer());
        const list = await agent
          .get('/geneva-drive/')
          .query({ heroId: String(order.id), waitingLongerThan: '0s' })
          .expect(200);
        expect(list.text).toContain(workflow.id);
        const notWaiting = await agent
          .get('/geneva-drive/api/workflows')
          .query({ heroId: String(order.id), waitingLongerThan: '1h' })
          .expect(200);
        expect(notWaiting.body).toEqual({ workflows: [], next: null });

        const confirm = await agent.get(`/geneva-drive/workflows/${workflow.id}/pause`).expect(200);
        const csrf = /name="_csrf" value="([^"]+)"/.exec(confirm.text)![1];
        await agent
          .post(`/geneva-drive/workflows/${workflow.id}/pause`)
          .type('form')
          .send({ _csrf: csrf })
          .expect(303);
        expect((await view(workflow.id)).workflow.state).toBe('paused');
      });
    });

    describe('campaigns: a resumable step over many subscribers', () => {
      // Three executions of sendEmails (maxIterations 500): two continued, one to the end.
      const SUBSCRIBERS = 1200;

      const campaignView = async (id: number) =>
        (await http().get(`/campaigns/${id}`).expect(200)).body as CampaignView;

      it('emails every subscriber exactly once, across several chained executions', async () => {
        const created = await http()
          .post('/campaigns')
          .send({ name: 'Spring sale', subscribers: SUBSCRIBERS })
          .expect(201);
        const campaignId = created.body.campaign.id as number;
        const workflowId = created.body.workflow.id as string;
        expect(created.body.campaign).toMatchObject({
          subscriberCount: SUBSCRIBERS,
          status: 'sending',
        });
        expect(created.body.workflow).toMatchObject({ state: 'ready', nextStepName: 'sendEmails' });

        // Watch the progress: the cursor only moves forward.
        const seen: CampaignView['progress'][] = [];
        const finished = await poll(
          `campaign ${campaignId}`,
          () => campaignView(campaignId),
          (current) => {
            seen.push(current.progress);
            return current.workflow?.state === 'finished';
          },
          // Generous: 1,200 committed checkpoints on a shared 2-core machine.
          55_000,
          100,
        );
        const cursors = seen.map((progress) => progress.cursor ?? 0);
        expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
        expect(seen.some((progress) => progress.current?.step === 'sendEmails')).toBe(true);

        const dataSource = app!.get(DataSource);
        const subscriberIds = (
          await dataSource.query<Array<{ id: number }>>(
            `SELECT id FROM ${dataSource.driver.escape(schema)}.subscribers WHERE campaign_id = $1 ORDER BY id`,
            [campaignId],
          )
        ).map((row) => row.id);
        const deliveredIds = (
          await dataSource.query<Array<{ subscriber_id: number }>>(
            `SELECT subscriber_id FROM ${dataSource.driver.escape(schema)}.campaign_deliveries WHERE campaign_id = $1 ORDER BY subscriber_id`,
            [campaignId],
          )
        ).map((row) => row.subscriber_id);
        expect(subscriberIds).toHaveLength(SUBSCRIBERS);
        expect(deliveredIds).toEqual(subscriberIds);
        // The mailer saw each subscriber once.
        expect(app!.get(CampaignMailer).stats(campaignId)).toEqual({
          sent: SUBSCRIBERS,
          recipients: SUBSCRIBERS,
          duplicates: 0,
        });

        expect(finished.campaign).toMatchObject({ status: 'sent', deliveredCount: SUBSCRIBERS });
        expect(finished.progress).toMatchObject({
          subscribers: SUBSCRIBERS,
          delivered: SUBSCRIBERS,
          cursor: subscriberIds.at(-1),
          current: null,
        });

        // maxIterations ends an execution after 500 subscribers; each successor continues from its
        // predecessor's cursor.
        const timeline = (await view(workflowId)).timeline;
        const chain = timeline.filter((entry) => entry.step === 'sendEmails');
        expect(finished.progress.chainLength).toBe(chain.length);
        expect(chain.length).toBeGreaterThanOrEqual(SUBSCRIBERS / CAMPAIGN_MAX_ITERATIONS);
        const continued = chain.slice(0, -1);
        expect(continued.map((entry) => [entry.state, entry.outcome])).toEqual(
          continued.map(() => ['completed', 'continued']),
        );
        expect(continued.map((entry) => entry.cursor)).toEqual(
          continued.map((_, i) => subscriberIds[(i + 1) * CAMPAIGN_MAX_ITERATIONS - 1]),
        );
        expect([chain.at(-1)!.state, chain.at(-1)!.outcome]).toEqual(['completed', 'success']);
        expect(rows({ timeline } as WorkflowView).at(-1)).toEqual([
          'report',
          'completed',
          'success',
        ]);
      }, 60_000);

      it('answers 404 for an unknown campaign and 400 for a bad body', async () => {
        await http().get('/campaigns/987654').expect(404);
        await http().post('/campaigns').send({ subscribers: 10 }).expect(400);
        await http().post('/campaigns').send({ name: 'x', subscribers: -1 }).expect(400);
        await http().post('/campaigns').send({ name: 'x', subscribers: 1_000_000 }).expect(400);
      });
    });
  }),
);
