import { performance } from 'node:perf_hooks';
import { latencySummary } from './stats';

/**
 * The timings of one-at-a-time wakes, ours (`signal()`) and DBOS's (`send()`) alike: from the
 * call's start and from its return to the woken body's start, and the call itself.
 */
export class WakeTimings {
  private readonly fromCall: number[] = [];
  private readonly fromReturn: number[] = [];
  private readonly call: number[] = [];

  /** Times `send`, then waits for `bodyStarted` (the woken body's `performance.now()`). */
  async measure(send: () => Promise<unknown>, bodyStarted: Promise<number>): Promise<void> {
    const calledAt = performance.now();
    await send();
    const returnedAt = performance.now();
    const startedAt = await bodyStarted;
    this.fromCall.push(startedAt - calledAt);
    this.fromReturn.push(startedAt - returnedAt);
    this.call.push(returnedAt - calledAt);
  }

  summary() {
    return {
      fromCall: latencySummary(this.fromCall),
      fromReturn: latencySummary(this.fromReturn),
      call: latencySummary(this.call),
    };
  }
}
