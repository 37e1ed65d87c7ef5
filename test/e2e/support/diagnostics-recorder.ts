import diagnosticsChannel from 'node:diagnostics_channel';
import type { GenevaDriveDiagnosticsEvent } from '../../../lib';

type Predicate = (event: GenevaDriveDiagnosticsEvent) => boolean;

interface Waiter {
  channel: string;
  predicate: Predicate;
  count: number;
  resolve: (events: GenevaDriveDiagnosticsEvent[]) => void;
}

/**
 * Records the library's diagnostics events on some channels, so a test waits for what the engine
 * says it did instead of polling the database.
 */
export class DiagnosticsRecorder {
  private readonly events: Array<{ channel: string; event: GenevaDriveDiagnosticsEvent }> = [];
  private readonly waiters = new Set<Waiter>();
  private readonly listeners = new Map<string, (message: unknown) => void>();

  constructor(channels: readonly string[]) {
    for (const channel of channels) {
      const listener = (message: unknown) =>
        this.record(channel, message as GenevaDriveDiagnosticsEvent);
      diagnosticsChannel.subscribe(channel, listener);
      this.listeners.set(channel, listener);
    }
  }

  /** The events on `channel` matching `predicate`, so far. */
  seen(channel: string, predicate: Predicate = () => true): GenevaDriveDiagnosticsEvent[] {
    return this.events
      .filter((entry) => entry.channel === channel && predicate(entry.event))
      .map((entry) => entry.event);
  }

  /** Resolves once `count` events on `channel` match `predicate` (counting earlier ones). */
  until(
    channel: string,
    predicate: Predicate,
    count = 1,
    timeoutMs = 15_000,
  ): Promise<GenevaDriveDiagnosticsEvent[]> {
    const already = this.seen(channel, predicate);
    if (already.length >= count) return Promise.resolve(already);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(
          new Error(
            `${count} event(s) on ${channel} did not come within ${timeoutMs} ms (saw ${this.seen(channel, predicate).length})`,
          ),
        );
      }, timeoutMs);
      const waiter: Waiter = {
        channel,
        predicate,
        count,
        resolve: (events) => {
          clearTimeout(timer);
          resolve(events);
        },
      };
      this.waiters.add(waiter);
    });
  }

  /** `until` for the events of one workflow. */
  forWorkflow(
    channel: string,
    workflowId: string,
    count = 1,
  ): Promise<GenevaDriveDiagnosticsEvent[]> {
    return this.until(channel, (event) => event.workflowId === workflowId, count);
  }

  close(): void {
    for (const [channel, listener] of this.listeners)
      diagnosticsChannel.unsubscribe(channel, listener);
    this.listeners.clear();
  }

  private record(channel: string, event: GenevaDriveDiagnosticsEvent): void {
    this.events.push({ channel, event });
    for (const waiter of [...this.waiters]) {
      if (waiter.channel !== channel) continue;
      const matching = this.seen(channel, waiter.predicate);
      if (matching.length < waiter.count) continue;
      this.waiters.delete(waiter);
      waiter.resolve(matching);
    }
  }
}
