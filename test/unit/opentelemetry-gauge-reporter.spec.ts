import {
  metrics,
  type Attributes,
  type Meter,
  type ObservableCallback,
  type ObservableResult,
} from '@opentelemetry/api';
import { OpenTelemetryGaugeReporter } from 'nestjs-geneva-drive/opentelemetry';

/** The part of a Meter the reporter uses, recording what an SDK would collect. */
class FakeMeter {
  readonly gauges = new Map<string, { description?: string; callbacks: Set<ObservableCallback> }>();
  readonly histograms = new Map<
    string,
    { unit?: string; recorded: Array<[number, Attributes?]> }
  >();

  createHistogram(name: string, options?: { unit?: string }) {
    const histogram = { unit: options?.unit, recorded: [] as Array<[number, Attributes?]> };
    this.histograms.set(name, histogram);
    return {
      record: (value: number, attributes?: Attributes) =>
        histogram.recorded.push([value, attributes]),
    };
  }

  createObservableGauge(name: string, options?: { description?: string }) {
    const gauge = { description: options?.description, callbacks: new Set<ObservableCallback>() };
    this.gauges.set(name, gauge);
    return {
      addCallback: (callback: ObservableCallback) => gauge.callbacks.add(callback),
      removeCallback: (callback: ObservableCallback) => gauge.callbacks.delete(callback),
    };
  }

  /** One collection: every observation of every gauge. */
  async collect(): Promise<Array<{ name: string; value: number; attributes?: Attributes }>> {
    const observed: Array<{ name: string; value: number; attributes?: Attributes }> = [];
    for (const [name, { callbacks }] of this.gauges) {
      const result: ObservableResult = {
        observe: (value, attributes) => observed.push({ name, value, attributes }),
      };
      for (const callback of callbacks) await callback(result);
    }
    return observed;
  }
}

describe('OpenTelemetryGaugeReporter', () => {
  it('records histograms as OpenTelemetry histograms in ms, one instrument per name', () => {
    const meter = new FakeMeter();
    const reporter = new OpenTelemetryGaugeReporter(meter as unknown as Meter);

    reporter.histogram('geneva_drive.step.duration_ms', 12, { step_name: 'charge' });
    reporter.histogram('geneva_drive.step.duration_ms', 30, { step_name: 'ship' });
    reporter.histogram('geneva_drive.signal.wake_ms', 5);

    expect([...meter.histograms.entries()]).toEqual([
      [
        'geneva_drive.step.duration_ms',
        {
          unit: 'ms',
          recorded: [
            [12, { step_name: 'charge' }],
            [30, { step_name: 'ship' }],
          ],
        },
      ],
      ['geneva_drive.signal.wake_ms', { unit: 'ms', recorded: [[5, {}]] }],
    ]);
  });

  it('creates one observable gauge per name and reports the latest value per tag set', async () => {
    const meter = new FakeMeter();
    const reporter = new OpenTelemetryGaugeReporter(meter as unknown as Meter);

    reporter.gauge('geneva_drive.paused', 3);
    reporter.gauge('geneva_drive.paused', 1, { workflow: 'Order' });
    reporter.gauge('geneva_drive.paused', 2, { workflow: 'Signup' });
    reporter.gauge('geneva_drive.paused', 0, { workflow: 'Order' });
    reporter.gauge('geneva_drive.paused_ratio', 0.25, { workflow: 'Order' });

    expect([...meter.gauges.keys()]).toEqual(['geneva_drive.paused', 'geneva_drive.paused_ratio']);
    expect(await meter.collect()).toEqual([
      { name: 'geneva_drive.paused', value: 3, attributes: {} },
      { name: 'geneva_drive.paused', value: 0, attributes: { workflow: 'Order' } },
      { name: 'geneva_drive.paused', value: 2, attributes: { workflow: 'Signup' } },
      { name: 'geneva_drive.paused_ratio', value: 0.25, attributes: { workflow: 'Order' } },
    ]);
  });

  it('shutdown() removes its callbacks', async () => {
    const meter = new FakeMeter();
    const reporter = new OpenTelemetryGaugeReporter(meter as unknown as Meter);
    reporter.gauge('geneva_drive.ready', 5);
    reporter.shutdown();
    expect(await meter.collect()).toEqual([]);
  });

  it('works with the @opentelemetry/api global meter (a no-op until an SDK is registered)', () => {
    const reporter = new OpenTelemetryGaugeReporter(metrics.getMeter('geneva-drive'));
    expect(() => reporter.gauge('geneva_drive.ready', 1, { workflow: 'Order' })).not.toThrow();
    reporter.shutdown();
  });
});
