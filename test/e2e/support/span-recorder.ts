import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

type SpanPredicate = (span: ReadableSpan) => boolean;

/**
 * The OpenTelemetry SDK's in-memory exporter behind the global tracer provider, and a span
 * processor that resolves waiters as spans end, so a test waits on spans instead of polling.
 */
export class SpanRecorder {
  readonly exporter = new InMemorySpanExporter();
  private readonly provider: BasicTracerProvider;
  private readonly waiters = new Set<{
    predicate: SpanPredicate;
    count: number;
    resolve: () => void;
  }>();

  constructor() {
    const notifier: SpanProcessor = {
      onStart: () => undefined,
      onEnd: () => this.notify(),
      forceFlush: () => Promise.resolve(),
      shutdown: () => Promise.resolve(),
    };
    this.provider = new BasicTracerProvider({
      spanProcessors: [new SimpleSpanProcessor(this.exporter), notifier],
    });
    trace.setGlobalTracerProvider(this.provider);
  }

  spans(predicate: SpanPredicate = () => true): ReadableSpan[] {
    return this.exporter.getFinishedSpans().filter(predicate);
  }

  /** Resolves once `count` ended spans match. */
  until(predicate: SpanPredicate, count: number, timeoutMs = 15_000): Promise<ReadableSpan[]> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(
          new Error(
            `${count} span(s) did not end within ${timeoutMs} ms (saw ${this.spans(predicate).length})`,
          ),
        );
      }, timeoutMs);
      const waiter = {
        predicate,
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve(this.spans(predicate));
        },
      };
      this.waiters.add(waiter);
      this.notify();
    });
  }

  async close(): Promise<void> {
    await this.provider.shutdown();
    trace.disable();
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) {
      if (this.spans(waiter.predicate).length < waiter.count) continue;
      this.waiters.delete(waiter);
      waiter.resolve();
    }
  }
}
