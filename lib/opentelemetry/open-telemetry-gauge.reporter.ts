import type {
  Attributes,
  Histogram,
  Meter,
  ObservableCallback,
  ObservableGauge,
} from '@opentelemetry/api';
import type { GaugeReporter } from '../interfaces/module-options.interface';

/** One observable gauge and the latest value recorded for each tag set. */
interface Instrument {
  gauge: ObservableGauge;
  callback: ObservableCallback;
  latest: Map<string, { value: number; attributes: Attributes }>;
}

/**
 * A `GaugeReporter` on OpenTelemetry metrics: each gauge name becomes an observable gauge of the
 * given `Meter`, which reports the latest value recorded for every tag set (tags become
 * attributes) whenever the SDK collects; each histogram name (step duration, queue delay, signal
 * wake latency) becomes an OpenTelemetry histogram in milliseconds.
 *
 * ```ts
 * import { metrics } from '@opentelemetry/api';
 * import { OpenTelemetryGaugeReporter } from 'nestjs-geneva-drive/opentelemetry';
 *
 * GenevaDriveModule.forRoot({
 *   metrics: new OpenTelemetryGaugeReporter(metrics.getMeter('geneva-drive')),
 * });
 * ```
 * Published as the `nestjs-geneva-drive/opentelemetry` subpath, so apps that do not use it never
 * load `@opentelemetry/api` (an optional peer dependency).
 */
export class OpenTelemetryGaugeReporter implements GaugeReporter {
  private readonly instruments = new Map<string, Instrument>();
  private readonly histograms = new Map<string, Histogram>();

  constructor(private readonly meter: Meter) {}

  histogram(name: string, value: number, tags?: Record<string, string>): void {
    let histogram = this.histograms.get(name);
    if (!histogram) {
      histogram = this.meter.createHistogram(name, {
        unit: 'ms',
        description: `nestjs-geneva-drive latency ${name}`,
      });
      this.histograms.set(name, histogram);
    }
    histogram.record(value, { ...tags });
  }

  gauge(name: string, value: number, tags?: Record<string, string>): void {
    const instrument = this.instruments.get(name) ?? this.create(name);
    const attributes: Attributes = { ...tags };
    instrument.latest.set(attributesKey(attributes), { value, attributes });
  }

  /** Stops observing: removes every callback this reporter registered. */
  shutdown(): void {
    for (const { gauge, callback } of this.instruments.values()) gauge.removeCallback(callback);
    this.instruments.clear();
  }

  private create(name: string): Instrument {
    const gauge = this.meter.createObservableGauge(name, {
      description: `nestjs-geneva-drive housekeeping gauge ${name}`,
    });
    const latest: Instrument['latest'] = new Map();
    const callback: ObservableCallback = (result) => {
      for (const { value, attributes } of latest.values()) result.observe(value, attributes);
    };
    gauge.addCallback(callback);
    const instrument = { gauge, callback, latest };
    this.instruments.set(name, instrument);
    return instrument;
  }
}

/** A stable key for a tag set (order-independent). */
function attributesKey(attributes: Attributes): string {
  return JSON.stringify(
    Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
}
