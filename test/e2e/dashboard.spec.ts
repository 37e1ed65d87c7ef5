import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import request from 'supertest';
import type { App } from 'supertest/types';
import { Step, StepExecutionEntity, Workflow, WorkflowEntity } from '../../lib';
import {
  GenevaDriveDashboardModule,
  type DashboardAuthorizationContext,
} from '../../lib/dashboard';
import type { QueuesOverview } from '../../lib/dashboard/dashboard-timeline.interface';
import { Order } from '../fixtures/order.entity';
import { testDatabaseLabel } from './support/database';
import { EngineHarness } from './support/engine-harness';
import { testTransport } from './support/transport';

/** Its first step is an hour away: the workflow stays `ready` for the whole test. */
@Workflow({ hero: () => Order })
class LaterWorkflow {
  @Step({ wait: '1h' }) first() {}
  @Step() second() {}
}

@Workflow({ hero: () => Order })
class OtherLaterWorkflow {
  @Step({ wait: '1h' }) only() {}
}

const HOSTILE = '<script>alert(1)</script>';

/** How the queues page names each transport the suite runs on. */
const TRANSPORT_SHOWN = {
  redis: 'BullMQ on Redis',
  postgres: 'BullMQ on PostgreSQL',
  local: 'local (steps run in this process',
};

/** The CSRF token of a page's form. */
function csrfOf(page: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error('the page has no CSRF field');
  return match[1];
}

/**
 * The operator dashboard (SPEC §16.4) on a real app: pages and the JSON API read what the
 * database holds, writes go through WorkflowService and land in the database, and the guards
 * (CSRF, authorize, readOnly) refuse without changing anything.
 */
describe(`dashboard (${testDatabaseLabel})`, () => {
  let harness: EngineHarness;
  let http: App;
  const asked: DashboardAuthorizationContext[] = [];

  const stateOf = async (id: string) =>
    (await harness.dataSource.getRepository(WorkflowEntity).findOneByOrFail({ id })).state;
  const start = async (
    workflow: typeof LaterWorkflow | typeof OtherLaterWorkflow,
    metadata?: Record<string, unknown>,
  ) => {
    const hero = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    return { hero, workflow: await harness.service.start(workflow, { hero, metadata }) };
  };

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [LaterWorkflow, OtherLaterWorkflow],
      entities: [Order],
      imports: [
        GenevaDriveDashboardModule.forRoot({
          readOnly: false,
          pageSize: 2,
          authorize: (context) => {
            asked.push(context);
            const request = context.request as { headers: Record<string, string | undefined> };
            return request.headers['x-deny'] !== context.action;
          },
        }),
        GenevaDriveDashboardModule.forRoot({
          path: 'read-only',
          authorize: () => true,
          readOnly: true,
        }),
        GenevaDriveDashboardModule.forRoot({ path: 'no-authorize', readOnly: false }),
      ],
    });
    http = harness.app.getHttpServer() as App;
  });

  afterAll(() => harness.close());

  it('lists workflows newest first, filtered, a page at a time', async () => {
    const a = await start(LaterWorkflow);
    const b = await start(LaterWorkflow);
    const c = await start(LaterWorkflow);
    const other = await start(OtherLaterWorkflow);
    await harness.service.pause(b.workflow);

    const first = await request(http)
      .get('/geneva-drive/')
      .query({ class: 'LaterWorkflow' })
      .expect(200);
    expect(first.text).toContain(c.workflow.id);
    expect(first.text).toContain(b.workflow.id);
    expect(first.text).not.toContain(a.workflow.id);
    expect(first.text).not.toContain(other.workflow.id);
    const next = /rel="next" href="([^"]+)"/.exec(first.text)![1].replace(/&amp;/g, '&');
    const second = await request(http).get(next).expect(200);
    expect(second.text).toContain(a.workflow.id);
    expect(second.text).not.toContain(c.workflow.id);

    const paused = await request(http).get('/geneva-drive/?state=paused').expect(200);
    expect(paused.text).toContain(b.workflow.id);
    expect(paused.text).not.toContain(a.workflow.id);

    const byHero = await request(http)
      .get('/geneva-drive/api/workflows')
      .query({ heroType: 'Order', heroId: String(other.hero.id) })
      .expect(200);
    expect((byHero.body as { workflows: WorkflowEntity[] }).workflows.map((w) => w.id)).toEqual([
      other.workflow.id,
    ]);
    const byText = await request(http)
      .get('/geneva-drive/api/workflows')
      .query({ q: a.workflow.id })
      .expect(200);
    expect((byText.body as { workflows: WorkflowEntity[] }).workflows.map((w) => w.id)).toEqual([
      a.workflow.id,
    ]);
    const atStep = await request(http)
      .get('/geneva-drive/api/workflows')
      .query({ step: 'only', state: ['ready', 'paused'] })
      .expect(200);
    expect((atStep.body as { workflows: WorkflowEntity[] }).workflows.map((w) => w.id)).toEqual([
      other.workflow.id,
    ]);
    const future = await request(http)
      .get('/geneva-drive/api/workflows')
      .query({ createdFrom: '2999-01-01' })
      .expect(200);
    expect((future.body as { workflows: WorkflowEntity[] }).workflows).toEqual([]);

    const bad = await request(http).get('/geneva-drive/?state=sleeping').expect(400);
    expect(bad.text).toContain('Filter state must be one of');
    expect(asked.some((context) => context.action === 'view')).toBe(true);
  });

  it('shows a workflow timeline with its signal, hostile text rendered inert', async () => {
    const { workflow } = await start(LaterWorkflow, { note: HOSTILE });
    await harness.service.signal(workflow, 'payment', {
      payload: { note: HOSTILE },
      idempotencyKey: 'k-1',
    });
    await harness.dataSource
      .getRepository(StepExecutionEntity)
      .update({ workflowId: workflow.id }, { errorMessage: HOSTILE, errorClassName: 'Boom' });

    const page = await request(http).get(`/geneva-drive/workflows/${workflow.id}`).expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('Signal payment');
    expect(page.text).toContain('k-1');
    expect(page.text).toContain('Step first');
    expect(page.text).not.toContain('<script>');
    expect(page.text.split('&lt;script&gt;alert(1)&lt;/script&gt;').length - 1).toBe(3);

    const api = await request(http).get(`/geneva-drive/api/workflows/${workflow.id}`).expect(200);
    const body = api.body as { timeline: Array<{ kind: string }> };
    expect(body.timeline.map((entry) => entry.kind).sort()).toEqual(['execution', 'signal']);
  });

  it('pauses and resumes through the confirmation forms', async () => {
    const { workflow } = await start(LaterWorkflow);
    const agent = request.agent(http);
    const confirm = await agent.get(`/geneva-drive/workflows/${workflow.id}/pause`).expect(200);
    await agent
      .post(`/geneva-drive/workflows/${workflow.id}/pause`)
      .type('form')
      .send({ _csrf: csrfOf(confirm.text) })
      .expect(303)
      .expect('Location', `/geneva-drive/workflows/${workflow.id}`);
    expect(await stateOf(workflow.id)).toBe('paused');

    const again = await agent.get(`/geneva-drive/workflows/${workflow.id}/resume`).expect(200);
    await agent
      .post(`/geneva-drive/workflows/${workflow.id}/resume`)
      .type('form')
      .send({ _csrf: csrfOf(again.text) })
      .expect(303);
    expect(await stateOf(workflow.id)).toBe('ready');

    // A second pause of a ready workflow is fine; resuming a ready one is a 409 page.
    const refused = await agent
      .post(`/geneva-drive/workflows/${workflow.id}/resume`)
      .type('form')
      .send({ _csrf: csrfOf(again.text) })
      .expect(409);
    expect(refused.text).toContain('Refused');
    expect(await stateOf(workflow.id)).toBe('ready');
  });

  it('sends a signal and skips a step through their forms', async () => {
    const { workflow } = await start(LaterWorkflow);
    const agent = request.agent(http);
    const confirm = await agent.get(`/geneva-drive/workflows/${workflow.id}/signal`).expect(200);
    await agent
      .post(`/geneva-drive/workflows/${workflow.id}/signal`)
      .type('form')
      .send({ _csrf: csrfOf(confirm.text), name: 'approval', payload: '{"by":"ops"}', key: 'a-1' })
      .expect(303);
    const [signal] = await harness.service.signals(workflow);
    expect([signal.name, signal.payload, signal.idempotencyKey]).toEqual([
      'approval',
      { by: 'ops' },
      'a-1',
    ]);
    const badJson = await agent
      .post(`/geneva-drive/workflows/${workflow.id}/signal`)
      .type('form')
      .send({ _csrf: csrfOf(confirm.text), name: 'approval', payload: '{nope' })
      .expect(400);
    expect(badJson.text).toContain('payload must be JSON');

    const skip = await agent.get(`/geneva-drive/workflows/${workflow.id}/skip`).expect(200);
    await agent
      .post(`/geneva-drive/workflows/${workflow.id}/skip`)
      .type('form')
      .send({ _csrf: csrfOf(skip.text) })
      .expect(303);
    // The skipped execution, not the workflow row: `second` is due at once and may already have
    // run (at once in process on the local transport, a few ms later on BullMQ).
    const [first] = await harness.history(workflow.id);
    expect(first).toMatchObject({ stepName: 'first', state: 'skipped', outcome: 'skipped' });
  });

  it('bulk-cancels a filtered set after its dry-run count', async () => {
    const mine = [await start(OtherLaterWorkflow), await start(OtherLaterWorkflow)];
    const before = await harness.dataSource
      .getRepository(WorkflowEntity)
      .countBy({ type: 'OtherLaterWorkflow', state: 'ready' });
    const spared = await start(LaterWorkflow);
    const agent = request.agent(http);
    const dryRun = await agent
      .get('/geneva-drive/bulk/cancel?class=OtherLaterWorkflow&state=ready')
      .expect(200);
    expect(dryRun.text).toContain(`<strong data-testid="matching">${before}</strong>`);
    const api = await agent
      .get('/geneva-drive/api/bulk/cancel?class=OtherLaterWorkflow&state=ready')
      .expect(200);
    expect(api.body).toEqual({ matching: before });

    const done = await agent
      .post('/geneva-drive/bulk/cancel')
      .type('form')
      .send({ _csrf: csrfOf(dryRun.text), class: 'OtherLaterWorkflow', state: 'ready' })
      .expect(200);
    expect(done.text).toContain(`<strong data-testid="done">${before}</strong>`);
    for (const { workflow } of mine) expect(await stateOf(workflow.id)).toBe('canceled');
    expect(await stateOf(spared.workflow.id)).toBe('ready');
    expect(
      await harness.dataSource
        .getRepository(WorkflowEntity)
        .countBy({ type: 'OtherLaterWorkflow', state: 'ready' }),
    ).toBe(0);
  });

  it('refuses a write without a matching CSRF token, and changes nothing', async () => {
    const { workflow } = await start(LaterWorkflow);
    const agent = request.agent(http);
    await agent.get(`/geneva-drive/workflows/${workflow.id}/cancel`).expect(200);
    const refused = await agent
      .post(`/geneva-drive/workflows/${workflow.id}/cancel`)
      .type('form')
      .send({ _csrf: 'x'.repeat(43) })
      .expect(403);
    expect(refused.text).toContain('CSRF token');
    await request(http)
      .post(`/geneva-drive/api/workflows/${workflow.id}/cancel`)
      .send({})
      .expect(403);
    expect(await stateOf(workflow.id)).toBe('ready');

    const token = (await agent.get('/geneva-drive/api/csrf').expect(200)).body as { token: string };
    await agent
      .post(`/geneva-drive/api/workflows/${workflow.id}/pause`)
      .set('x-csrf-token', token.token)
      .send({})
      .expect(200);
    expect(await stateOf(workflow.id)).toBe('paused');
  });

  it('answers 403 when authorize says no, and changes nothing', async () => {
    const { workflow } = await start(LaterWorkflow);
    const agent = request.agent(http);
    const confirm = await agent.get(`/geneva-drive/workflows/${workflow.id}/cancel`).expect(200);
    asked.length = 0;
    await agent
      .post(`/geneva-drive/workflows/${workflow.id}/cancel`)
      .set('x-deny', 'cancel')
      .type('form')
      .send({ _csrf: csrfOf(confirm.text) })
      .expect(403);
    expect(asked).toEqual([
      expect.objectContaining({ action: 'cancel', workflowIds: [workflow.id] }),
    ]);
    expect(await stateOf(workflow.id)).toBe('ready');
    await agent.get('/geneva-drive/').set('x-deny', 'view').expect(403);
  });

  it('offers only the actions authorize allows: a denied action has no link, the rest stay', async () => {
    const { workflow } = await start(LaterWorkflow);
    const agent = request.agent(http);
    const links = (text: string, prefix: string) =>
      [...text.matchAll(new RegExp(`href="${prefix}([a-zA-Z]+)`, 'g'))].map((match) => match[1]);

    const page = await agent.get(`/geneva-drive/workflows/${workflow.id}`).set('x-deny', 'cancel');
    expect(links(page.text, `/geneva-drive/workflows/${workflow.id}/`)).toEqual([
      'pause',
      'resume',
      'resumeAt',
      'skip',
      'signal',
    ]);
    const list = await agent.get('/geneva-drive/').set('x-deny', 'pause');
    expect(links(list.text, '/geneva-drive/bulk/')).toEqual(['resume', 'skip', 'cancel']);
    asked.length = 0;
    const allowed = await agent.get(`/geneva-drive/workflows/${workflow.id}`).expect(200);
    expect(links(allowed.text, `/geneva-drive/workflows/${workflow.id}/`)).toHaveLength(6);
    // The page asked about each action for this workflow.
    expect(asked.filter((context) => context.action !== 'view')).toEqual(
      ['pause', 'resume', 'resumeAt', 'skip', 'cancel', 'signal'].map((action) =>
        expect.objectContaining({ action, workflowIds: [workflow.id] }),
      ),
    );
  });

  it('read-only (or without authorize): no actions offered, writes refused', async () => {
    const { workflow } = await start(LaterWorkflow);
    for (const path of ['read-only', 'no-authorize']) {
      const agent = request.agent(http);
      const page = await agent.get(`/${path}/workflows/${workflow.id}`).expect(200);
      expect(page.text).not.toContain('<h2>Actions</h2>');
      const list = await agent.get(`/${path}/`).expect(200);
      expect(list.text).not.toContain('Bulk actions');
      await agent.get(`/${path}/workflows/${workflow.id}/cancel`).expect(403);
      const token = (await agent.get(`/${path}/api/csrf`).expect(200)).body as { token: string };
      const refused = await agent
        .post(`/${path}/workflows/${workflow.id}/cancel`)
        .type('form')
        .send({ _csrf: token.token })
        .expect(403);
      expect(refused.text).toContain('read-only');
      await agent
        .post(`/${path}/api/bulk/cancel`)
        .set('x-csrf-token', token.token)
        .send({})
        .expect(403);
    }
    expect(await stateOf(workflow.id)).toBe('ready');
  });

  it('shows each queue with its jobs by state and the workers seen', async () => {
    const read = async () =>
      ((await request(http).get('/geneva-drive/api/queues').expect(200)).body as QueuesOverview)
        .queues;
    const before = await read();
    await start(LaterWorkflow);
    const after = await read();
    expect(after).toEqual([
      {
        queue: 'geneva-drive',
        waiting: 0,
        delayed: before[0].delayed + 1,
        active: 0,
        workers: expect.any(Number) as number,
      },
    ]);
    expect(after[0].workers).toBeGreaterThanOrEqual(1);
    const page = await request(http).get('/geneva-drive/queues').expect(200);
    expect(page.text).toContain(TRANSPORT_SHOWN[testTransport]);
    expect(page.text).toMatch(
      new RegExp(`<td>geneva-drive</td>\\s*<td>0</td>\\s*<td>${after[0].delayed}</td>`),
    );
  });
});

/** The host app's own admin guard: every route needs the header, the dashboard's included. */
@Injectable()
class AdminKeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>();
    return request.headers['x-admin-key'] === 'let-me-in';
  }
}

describe(`dashboard under the app's global prefix and global guard (${testDatabaseLabel})`, () => {
  let harness: EngineHarness;
  let http: App;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [LaterWorkflow],
      entities: [Order],
      providers: [{ provide: APP_GUARD, useClass: AdminKeyGuard }],
      imports: [GenevaDriveDashboardModule.forRoot({ readOnly: false, authorize: () => true })],
      configure: (app) => app.setGlobalPrefix('admin'),
    });
    http = harness.app.getHttpServer() as App;
  });

  afterAll(() => harness.close());

  it("is refused by the app's guard without its key, pages and API alike", async () => {
    await request(http).get('/admin/geneva-drive/').expect(403);
    await request(http).get('/admin/geneva-drive/api/workflows').expect(403);
    await request(http).get('/geneva-drive/').set('x-admin-key', 'let-me-in').expect(404);
  });

  it('links, forms and redirects stay under the prefix, and a pause through them lands', async () => {
    const hero = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    const workflow = await harness.service.start(LaterWorkflow, { hero });
    const agent = request.agent(http).set('x-admin-key', 'let-me-in');

    const list = await agent.get('/admin/geneva-drive/').expect(200);
    expect(list.text).toContain(`href="/admin/geneva-drive/workflows/${workflow.id}"`);
    const confirm = await agent
      .get(`/admin/geneva-drive/workflows/${workflow.id}/pause`)
      .expect(200);
    expect(confirm.text).toContain(`action="/admin/geneva-drive/workflows/${workflow.id}/pause"`);
    await agent
      .post(`/admin/geneva-drive/workflows/${workflow.id}/pause`)
      .type('form')
      .send({ _csrf: csrfOf(confirm.text) })
      .expect(303)
      .expect('Location', `/admin/geneva-drive/workflows/${workflow.id}`);
    expect(
      (await harness.dataSource.getRepository(WorkflowEntity).findOneByOrFail({ id: workflow.id }))
        .state,
    ).toBe('paused');
  });
});

describe(`dashboard on the local transport, mounted by forRootAsync (${testDatabaseLabel}, no Redis)`, () => {
  let harness: EngineHarness;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [LaterWorkflow],
      entities: [Order],
      options: { transport: 'local', connection: { host: '127.0.0.1', port: 1 } },
      imports: [GenevaDriveDashboardModule.forRootAsync({ path: 'ops', useFactory: () => ({}) })],
    });
  });

  afterAll(() => harness.close());

  it('shows the in-process queue: the delayed job and this process as its worker', async () => {
    const hero = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    await harness.service.start(LaterWorkflow, { hero });
    const http = harness.app.getHttpServer() as App;
    const api = await request(http).get('/ops/api/queues').expect(200);
    expect(api.body).toEqual({
      transport: 'local',
      problem: null,
      queues: [{ queue: 'geneva-drive', waiting: 0, delayed: 1, active: 0, workers: 1 }],
    });
    const page = await request(http).get('/ops/queues').expect(200);
    expect(page.text).toContain('local (steps run in this process');
  });
});
