import { mkdtempSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { Step, Workflow, WorkflowEntity } from '../../lib';
import { GenevaDriveDashboardModule } from '../../lib/dashboard';
import { Order } from '../fixtures/order.entity';
import { testDatabase, testPooler } from './support/database';
import { describeIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { testRedisCluster } from './support/redis';

/** Stays `ready` for the test: its first step is an hour away. */
@Workflow({ hero: () => Order })
class InvoiceWorkflow {
  @Step({ wait: '1h' }) send() {}
  @Step() remind() {}
}

@Workflow({ hero: () => Order })
class ReminderWorkflow {
  @Step({ wait: '1h' }) remind() {}
}

/**
 * Where the pages' screenshots go: a scratch directory, so a test run leaves the checkout as it
 * was; `DASHBOARD_SCREENSHOTS=docs/screenshots` refreshes the README's.
 */
const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS
  ? join(__dirname, '../..', process.env.DASHBOARD_SCREENSHOTS)
  : mkdtempSync(join(tmpdir(), 'geneva-dashboard-'));

// One browser run is enough: on PostgreSQL with a plain connection and a single Redis (the
// pages do not depend on the database or the transport; dashboard.spec.ts covers those).
describeIf(testDatabase === 'postgres' && testPooler === null && testRedisCluster === null)(
  'dashboard in a browser (Chromium, PostgreSQL)',
  () => {
    let harness: EngineHarness;
    let browser: Browser;
    let page: Page;
    let base: string;

    const stateOf = async (id: string) =>
      (await harness.dataSource.getRepository(WorkflowEntity).findOneByOrFail({ id })).state;
    const start = async (workflow: typeof InvoiceWorkflow | typeof ReminderWorkflow) => {
      const hero = await harness.dataSource.getRepository(Order).save({ status: 'new' });
      return { hero, workflow: await harness.service.start(workflow, { hero }) };
    };

    beforeAll(async () => {
      harness = await EngineHarness.boot({
        workflows: [InvoiceWorkflow, ReminderWorkflow],
        entities: [Order],
        imports: [GenevaDriveDashboardModule.forRoot({ readOnly: false, authorize: () => true })],
      });
      await harness.app.listen(0, '127.0.0.1');
      const address = harness.app.getHttpServer().address() as AddressInfo;
      base = `http://127.0.0.1:${address.port}/geneva-drive`;
      browser = await chromium.launch({
        executablePath: '/usr/bin/chromium',
        args: [
          '--no-sandbox',
          '--headless=new',
          '--disable-gpu',
          '--disable-dev-shm-usage',
          '--disable-background-networking',
          '--disable-component-update',
          '--no-first-run',
        ],
      });
      page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await harness?.close();
    });

    it('filters, shows a timeline with a signal, pauses, resumes and bulk-cancels', async () => {
      const invoices = [await start(InvoiceWorkflow), await start(InvoiceWorkflow)];
      const target = await start(InvoiceWorkflow);
      const reminders = [await start(ReminderWorkflow), await start(ReminderWorkflow)];
      await harness.service.pause(invoices[0].workflow);
      await harness.service.signal(target.workflow, 'approval', {
        payload: { approvedBy: 'ops@example.com', amount: 120 },
        idempotencyKey: 'approval-1',
      });

      await page.goto(`${base}/`);
      await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-list.png'), fullPage: true });

      // Filter by state and hero: only the target row.
      await page.locator('select[name=state]').selectOption('ready');
      await page.getByLabel('Hero type', { exact: true }).fill('Order');
      await page.getByLabel('Hero id', { exact: true }).fill(String(target.hero.id));
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/heroId=/);
      const rows = page.locator('tbody tr');
      expect(await rows.count()).toBe(1);
      expect(await rows.first().textContent()).toContain(target.workflow.id);

      // The workflow page: the timeline has the execution and the signal.
      await page.getByRole('link', { name: target.workflow.id }).click();
      await page.getByRole('heading', { name: 'Timeline' }).waitFor();
      expect(await page.locator('li.signal').textContent()).toContain('approval-1');
      expect(await page.locator('li.execution').first().textContent()).toContain('Step send');
      await page.screenshot({ path: join(SCREENSHOTS, 'dashboard-timeline.png'), fullPage: true });

      // Pause, then resume, each through its confirmation.
      await page.getByRole('link', { name: 'pause…' }).click();
      await page.getByRole('button', { name: 'Confirm pause' }).click();
      await page.getByRole('heading', { name: 'Timeline' }).waitFor();
      expect(await stateOf(target.workflow.id)).toBe('paused');
      await page.getByRole('link', { name: 'resume…', exact: true }).click();
      await page.getByRole('button', { name: 'Confirm resume' }).click();
      await page.getByRole('heading', { name: 'Timeline' }).waitFor();
      expect(await stateOf(target.workflow.id)).toBe('ready');

      // Bulk cancel of one class: the dry run counts it, the run cancels exactly it.
      await page.goto(`${base}/`);
      await page.getByLabel('Class', { exact: true }).fill('ReminderWorkflow');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/class=ReminderWorkflow/);
      await page.getByRole('link', { name: 'cancel all matching…' }).click();
      expect(await page.getByTestId('matching').textContent()).toBe('2');
      await page.getByRole('button', { name: 'cancel 2 workflow(s)' }).click();
      expect(await page.getByTestId('done').textContent()).toBe('2');
      for (const { workflow } of reminders) expect(await stateOf(workflow.id)).toBe('canceled');
      expect(await stateOf(invoices[0].workflow.id)).toBe('paused');
      expect(await stateOf(invoices[1].workflow.id)).toBe('ready');
      expect(await stateOf(target.workflow.id)).toBe('ready');
    }, 60_000);
  },
);
