import type { LoggerService } from '@nestjs/common';
import request from 'supertest';
import { GENEVA_DRIVE_DIAGNOSTICS_CHANNELS as CHANNELS } from '../../lib';
import { CLS_SEEN, ClsWorkflow, SignupHttpModule } from '../fixtures/cls.workflows';
import { testDatabaseLabel } from './support/database';
import { DiagnosticsRecorder } from './support/diagnostics-recorder';
import { EngineHarness } from './support/engine-harness';

/** The step logger's lines. */
class LogLines implements LoggerService {
  readonly lines: string[] = [];
  log(message: unknown) {
    this.lines.push(String(message));
  }
  warn(message: unknown) {
    this.lines.push(String(message));
  }
  error(message: unknown) {
    this.lines.push(String(message));
  }
}

/**
 * `cls: { keys }` (SPEC §16.6): a request id nestjs-cls's middleware set during an HTTP request
 * is captured by start() and is in the CLS store, ctx.context and the step logger's tags of every
 * step, also of one that runs in a new app after a restart.
 */
describe(`CLS keys captured at start() (${testDatabaseLabel})`, () => {
  let events: DiagnosticsRecorder;
  let harness: EngineHarness | null = null;
  const logs = new LogLines();

  const boot = (reuse?: EngineHarness) =>
    EngineHarness.boot({
      workflows: [ClsWorkflow],
      imports: [SignupHttpModule],
      options: { cls: { keys: ['requestId'] }, logger: logs },
      reuse: reuse && { schema: reuse.schema, prefix: reuse.prefix },
    });

  beforeAll(() => {
    events = new DiagnosticsRecorder([CHANNELS.finalize]);
  });

  afterAll(async () => {
    await harness?.close();
    events.close();
  });

  it('restores the request id around each step, after a restart too', async () => {
    harness = await boot();
    const response = await request(harness.app.getHttpServer() as Parameters<typeof request>[0])
      .post('/signups')
      .expect(201);
    const { workflowId, requestId } = response.body as { workflowId: string; requestId: string };
    expect(typeof requestId).toBe('string');
    expect(requestId.length).toBeGreaterThan(0);
    await events.until(
      CHANNELS.finalize,
      (event) => event.workflowId === workflowId && event.stepName === 'first',
    );
    await harness.closeApp();
    harness = await boot(harness);
    await events.until(
      CHANNELS.finalize,
      (event) => event.workflowId === workflowId && event.workflowState === 'finished',
    );

    expect(CLS_SEEN.filter((seen) => seen.workflowId === workflowId)).toEqual([
      { workflowId, step: 'first', clsRequestId: requestId, contextRequestId: requestId },
      { workflowId, step: 'second', clsRequestId: requestId, contextRequestId: requestId },
    ]);
    for (const step of ['first', 'second']) {
      const line = logs.lines.find((text) => text.includes(`step ${step} ran`));
      expect(line).toContain(`[requestId=${requestId} source=http]`);
      expect(line).toContain(`id=${workflowId}`);
    }
  });

  it('captures nothing outside a CLS context: the step sees the given context only', async () => {
    harness ??= await boot();
    const workflow = await harness.service.start(ClsWorkflow, { context: { source: 'cron' } });
    await events.until(
      CHANNELS.finalize,
      (event) => event.workflowId === workflow.id && event.stepName === 'first',
    );
    expect(CLS_SEEN.find((seen) => seen.workflowId === workflow.id)).toEqual({
      workflowId: workflow.id,
      step: 'first',
      clsRequestId: undefined,
      contextRequestId: undefined,
    });
  });
});
