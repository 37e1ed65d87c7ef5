import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import type { App } from 'supertest/types';
import { GENEVA_DRIVE_DIAGNOSTICS_CHANNELS as CHANNELS } from 'nestjs-geneva-drive';
import { CampaignMailer } from '../../sample-app/src/campaigns/campaign-mailer.service';
import { configFromEnv, describeSetup } from '../../sample-app/src/config';
import { testDatabase, testPooler } from './support/database';
import { describeIf } from './support/describe-if';
import { DiagnosticsRecorder } from './support/diagnostics-recorder';
import { testRedisCluster } from './support/redis';

const SHIP_WAIT = '2s';
/** Over two `maxIterations` (500 by default): the campaign's resumable step runs three executions. */
const CAMPAIGN_SUBSCRIBERS = 1200;

/**
 * The README's first command on a machine with nothing but Node.js: with no DATABASE_URL and no
 * REDIS_URL, the sample app keeps its state in a SQLite file and runs steps in process (transport
 * 'local'). An order goes through its workflow over HTTP, and a restart while `ship` waits for its
 * delay loses nothing; a campaign emails every subscriber once. (SQLite and no Redis whatever the
 * run's database: once, in the default run.)
 */
describeIf(testDatabase === 'postgres' && testPooler === null && testRedisCluster === null)(
  'sample app, embedded (SQLite file, local transport, empty environment)',
  () => {
    const directory = mkdtempSync(join(tmpdir(), 'sample-app-embedded-'));
    const sqliteFile = join(directory, 'data', 'sample-app.sqlite');
    const savedEnv = {
      SHIP_WAIT: process.env.SHIP_WAIT,
      INVENTORY_RETRY_WAIT: process.env.INVENTORY_RETRY_WAIT,
    };
    let events: DiagnosticsRecorder;
    let app: INestApplication<App> | null = null;

    async function boot(): Promise<INestApplication<App>> {
      const { AppModule } = await import('../../sample-app/src/app.module');
      const moduleRef = await Test.createTestingModule({
        imports: [AppModule.forRoot({ databaseUrl: null, redisUrl: null, sqliteFile })],
      }).compile();
      const booted = moduleRef.createNestApplication<INestApplication<App>>({ logger: ['error'] });
      await booted.init();
      return booted;
    }

    beforeAll(() => {
      // Decorator options are read when the workflow classes load: set them before the import.
      process.env.SHIP_WAIT = SHIP_WAIT;
      process.env.INVENTORY_RETRY_WAIT = '50ms';
      events = new DiagnosticsRecorder([CHANNELS.finalize, CHANNELS.park]);
    });

    afterAll(async () => {
      await app?.close();
      events.close();
      rmSync(directory, { recursive: true, force: true });
      for (const [key, value] of Object.entries(savedEnv)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    });

    it('an empty environment means SQLite in .data/ and the local transport, and the first log line says so', () => {
      const config = configFromEnv({});
      expect(config).toMatchObject({
        databaseUrl: null,
        redisUrl: null,
        sqliteFile: '.data/sample-app.sqlite',
      });
      expect(describeSetup(config)).toBe(
        "Sample app on SQLite in .data/sample-app.sqlite (set DATABASE_URL for PostgreSQL), steps in this process, transport 'local' (set REDIS_URL for BullMQ on Redis)",
      );
    });

    it('serves an order from creation to review, across a restart while ship waits', async () => {
      app = await boot();
      const created = await request(app.getHttpServer())
        .post('/orders')
        .send({ email: 'ada@example.com', amountCents: 4200 })
        .expect(201);
      const { order, workflow } = created.body as {
        order: { id: number };
        workflow: { id: string };
      };
      await events.forWorkflow(CHANNELS.park, workflow.id, 1);
      const paid = await request(app.getHttpServer())
        .post('/webhooks/payments')
        .send({ eventId: `evt_${randomUUID()}`, orderId: order.id, amountCents: 4200 })
        .expect(200);
      expect(paid.body.signal).toMatchObject({ state: 'claimed', workflowId: workflow.id });
      // reserveStock and capturePayment done; ship is due in SHIP_WAIT: stop now.
      await events.forWorkflow(CHANNELS.finalize, workflow.id, 2);
      await app.close();

      app = await boot();
      await events.forWorkflow(CHANNELS.finalize, workflow.id, 4);
      const view = await request(app.getHttpServer()).get(`/workflows/${workflow.id}`).expect(200);
      const { timeline, workflow: state } = view.body as {
        workflow: { state: string };
        timeline: Array<{ step: string; state: string; outcome: string | null }>;
      };
      expect(state.state).toBe('finished');
      expect(timeline.map((row) => [row.step, row.state, row.outcome])).toEqual([
        ['reserveStock', 'completed', 'success'],
        ['capturePayment', 'completed', 'success'],
        ['ship', 'completed', 'success'],
        ['requestReview', 'completed', 'success'],
      ]);
    });

    it('sends a campaign to every subscriber once, over several executions of its resumable step', async () => {
      app ??= await boot();
      const created = await request(app.getHttpServer())
        .post('/campaigns')
        .send({ name: 'Spring sale', subscribers: CAMPAIGN_SUBSCRIBERS })
        .expect(201);
      const { campaign, workflow } = created.body as {
        campaign: { id: number };
        workflow: { id: string };
      };
      const [settled] = await events.until(
        CHANNELS.finalize,
        (event) =>
          event.workflowId === workflow.id &&
          (event.workflowState === 'finished' || event.workflowState === 'paused'),
      );
      const view = await request(app.getHttpServer()).get(`/campaigns/${campaign.id}`).expect(200);
      expect({ state: settled.workflowState, campaign: view.body.campaign }).toMatchObject({
        state: 'finished',
        campaign: { status: 'sent', deliveredCount: CAMPAIGN_SUBSCRIBERS },
      });
      expect(view.body.progress).toMatchObject({ chainLength: 3 });
      expect(app.get(CampaignMailer).stats(campaign.id)).toEqual({
        sent: CAMPAIGN_SUBSCRIBERS,
        recipients: CAMPAIGN_SUBSCRIBERS,
        duplicates: 0,
      });
    });
  },
);
