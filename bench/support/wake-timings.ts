import { performance } from 'node:perf_hooks';
import type { RoundTripMeter } from './round-trip-meter';
import { latencySummary } from './stats';

/**
 * The timings of one-at-a-time wakes, ours (`signal()`) and DBOS's (`send()`) alike: from the
 * call's start and from its return to the woken body's start, and the call itself.
 */
export class WakeTimings {
  private readonly fromCall: number[] = [];
  private readonly fromReturn: number[] = [];
  private readonly call: number[] = [];
  private readonly callDatabase: number[] = [];

  /** With `roundTrips`: each call's time spent waiting on PostgreSQL too (`callDatabase…`). */
  constructor(private readonly roundTrips?: RoundTripMeter) {}

  /** Times `send`, then waits for `bodyStarted` (the woken body's `performance.now()`). */
  async measure(send: () => Promise<unknown>, bodyStarted: Promise<number>): Promise<void> {
    const waitedBefore = this.roundTrips?.waitedMs ?? 0;
    const calledAt = performance.now();
    await send();
    const returnedAt = performance.now();
    if (this.roundTrips) this.callDatabase.push(this.roundTrips.waitedMs - waitedBefore);
    const startedAt = await bodyStarted;
    this.fromCall.push(startedAt - calledAt);
    this.fromReturn.push(startedAt - returnedAt);
    this.call.push(returnedAt - calledAt);
  }

  /** The metrics of a run: p50/p95/p99 of each timing, in ms. */
  metrics() {
    const [fromCall, fromReturn, call] = [this.fromCall, this.fromReturn, this.call].map(
      latencySummary,
    );
    return {
      fromCallP50Ms: fromCall.p50,
      fromCallP95Ms: fromCall.p95,
      fromCallP99Ms: fromCall.p99,
      fromReturnP50Ms: fromReturn.p50,
      fromReturnP95Ms: fromReturn.p95,
      fromReturnP99Ms: fromReturn.p99,
      callP50Ms: call.p50,
      callP95Ms: call.p95,
      callP99Ms: call.p99,
      ...(this.roundTrips && {
        callDatabaseP50Ms: latencySummary(this.callDatabase).p50,
      }),
    };
  }
}
