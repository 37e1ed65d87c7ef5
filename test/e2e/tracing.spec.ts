import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { GENEVA_DRIVE_DIAGNOSTICS_CHANNELS as CHANNELS, type GaugeReporter } from '../../lib';
import { Order } from '../fixtures/order.entity';
import { TracedWorkflow } from '../fixtures/tracing.workflows';
import { testDatabaseLabel } from './support/database';
import { DiagnosticsRecorder } from './support/diagnostics-recorder';
import { EngineHarness } from './support/engine-harness';
import { SpanRecorder } from './support/span-recorder';

const SECRET_PAYLOAD = 'payload-secret-7f3a';
const SECRET_CONTEXT = 'context-secret-91bc';

/** Every `metrics.histogram()` call, in order. */
class HistogramLog implements GaugeReporter {
  readonly calls: Array<{ name: string; value: number; tags: Record<string, string> }> = [];
  gauge(): void {}
  histogram(name: string, value: number, tags: Record<string, string> = {}): void {
    this.calls.push({ name, value, tags });
  }
  of(name: string, step: string): number[] {
    return this.calls
      .filter((call) => call.name === name && call.tags.step_name === step)
      .map((call) => call.value);
  }
}

const ms = (time: [number, number]) => time[0] * 1000 + time[1] / 1e6;

/**
 * `tracing: true` (SPEC §16.6) on the real module: a span per step attempt linked (not parented)
 * to the `start()` span, across a reattempt, a signal wait and a timed wait; and the histograms.
 */
describe(`tracing and latency histograms (${testDatabaseLabel})`, () => {
  let spans: SpanRecorder;
  let events: DiagnosticsRecorder;
  let harness: EngineHarness;
  const histograms = new HistogramLog();

  beforeAll(async () => {
    spans = new SpanRecorder();
    events = new DiagnosticsRecorder([CHANNELS.park, CHANNELS.finalize]);
    harness = await EngineHarness.boot({
      workflows: [TracedWorkflow],
      entities: [Order],
      options: { tracing: true, metrics: histograms },
    });
  });

  afterAll(async () => {
    await harness.close();
    events.close();
    await spans.close();
  });

  it('traces a workflow with a reattempt, a signal wait and a timed wait', async () => {
    const hero = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    const workflow = await harness.service.start(TracedWorkflow, {
      hero,
      context: { note: SECRET_CONTEXT },
    });
    await events.forWorkflow(CHANNELS.park, workflow.id);
    await harness.service.signal(workflow, 'approval', { payload: { code: SECRET_PAYLOAD } });
    const isStep = (span: ReadableSpan) =>
      span.name === 'geneva_drive.step' &&
      span.attributes['geneva_drive.workflow.id'] === workflow.id;
    const steps = (await spans.until(isStep, 4)).sort((a, b) => ms(a.startTime) - ms(b.startTime));

    const [start] = spans.spans((span) => span.name === 'geneva_drive.start');
    expect(start.attributes).toEqual({ 'geneva_drive.workflow.class': 'TracedWorkflow' });
    const [signal] = spans.spans((span) => span.name === 'geneva_drive.signal');
    expect(signal.attributes).toEqual({
      'geneva_drive.workflow.id': workflow.id,
      'geneva_drive.signal.name': 'approval',
    });

    const history = await harness.history(workflow.id);
    expect(history.map((execution) => execution.stepName)).toEqual([
      'charge',
      'charge',
      'approve',
      'ship',
    ]);
    expect(steps.map((span) => span.attributes)).toEqual(
      history.map((execution, index) => ({
        'geneva_drive.workflow.id': workflow.id,
        'geneva_drive.workflow.class': 'TracedWorkflow',
        'geneva_drive.step.name': execution.stepName,
        'geneva_drive.execution.id': execution.id,
        'geneva_drive.attempt': index === 1 ? 2 : 1,
        'geneva_drive.hero.type': 'Order',
        'geneva_drive.hero.id': String(hero.id),
        'geneva_drive.outcome': index === 0 ? 'exception' : 'completed',
      })),
    );

    // The declined attempt: error status and an exception event.
    expect(steps[0].status).toEqual({ code: SpanStatusCode.ERROR, message: 'card declined' });
    expect(steps[0].events.map((event) => event.name)).toEqual(['exception']);
    expect(steps[0].events[0].attributes?.['exception.message']).toBe('card declined');
    for (const span of steps.slice(1)) {
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
      expect(span.events).toEqual([]);
    }

    // Links to the start() span, never its children: the ship step ran a second after approve.
    expect(ms(steps[3].startTime) - ms(steps[2].endTime)).toBeGreaterThanOrEqual(900);
    for (const span of steps) {
      expect(span.kind).toBe(SpanKind.CONSUMER);
      expect(span.parentSpanContext).toBeUndefined();
      expect(span.spanContext().traceId).not.toBe(start.spanContext().traceId);
      expect(span.links).toHaveLength(1);
      expect(span.links[0].context.traceId).toBe(start.spanContext().traceId);
      expect(span.links[0].context.spanId).toBe(start.spanContext().spanId);
    }

    // No payloads (the signal's, the context's) in any attribute.
    for (const span of spans.spans()) {
      const text = JSON.stringify(span.attributes);
      expect(text).not.toContain(SECRET_PAYLOAD);
      expect(text).not.toContain(SECRET_CONTEXT);
    }
  });

  it('records step duration, queue delay and signal wake latency as the rows have them', async () => {
    const [workflow] = await harness.service.list({ workflow: TracedWorkflow });
    await events.until(
      CHANNELS.finalize,
      (event) => event.workflowId === workflow.id && event.workflowState === 'finished',
    );
    const history = await harness.history(workflow.id);
    const [signal] = await harness.service.signals(workflow);
    const delays = (step: string) =>
      history
        .filter((execution) => execution.stepName === step)
        .map((execution) => execution.startedAt!.getTime() - execution.scheduledFor.getTime());
    for (const step of ['charge', 'approve', 'ship']) {
      expect(histograms.of('geneva_drive.step.queue_delay_ms', step)).toEqual(
        delays(step).map((d) => Math.max(0, d)),
      );
      const durations = histograms.of('geneva_drive.step.duration_ms', step);
      const rows = history.filter((execution) => execution.stepName === step);
      expect(durations).toHaveLength(rows.length);
      rows.forEach((execution, index) => {
        const stored = execution.finishedAt!.getTime() - execution.startedAt!.getTime();
        expect(durations[index]).toBeGreaterThanOrEqual(stored);
        expect(durations[index]).toBeLessThan(stored + 1000);
      });
    }
    const approve = history.find((execution) => execution.stepName === 'approve')!;
    expect(histograms.calls.filter((call) => call.name === 'geneva_drive.signal.wake_ms')).toEqual([
      {
        name: 'geneva_drive.signal.wake_ms',
        value: approve.startedAt!.getTime() - signal.createdAt.getTime(),
        tags: { workflow_class: 'TracedWorkflow', step_name: 'approve', signal_name: 'approval' },
      },
    ]);
  });
});
