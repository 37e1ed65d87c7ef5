import { performance } from 'node:perf_hooks';

/** What this meter needs of a node-postgres client's `query`: config, values, callback. */
type PgQuery = (this: unknown, ...args: unknown[]) => unknown;

interface PgModule {
  Client: { prototype: { query: PgQuery } };
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as PromiseLike<unknown> | null)?.then === 'function';

/**
 * The wall time this process spent waiting on PostgreSQL: from each message handed to a
 * node-postgres client until its reply was complete, overlapping waits counted once. A benchmark
 * sets it beside a call's whole time to tell the database's share from the library's: no client
 * of the same statements can return sooner than its round trips.
 * It wraps `Client.prototype.query` of the `pg` module this process loads (TypeORM's driver and
 * the library's pipelined messages both go through it); DBOS Transact's pool too when it resolves
 * the same module.
 */
export class RoundTripMeter {
  private inFlight = 0;
  private busySince = 0;
  private busyMs = 0;

  private constructor() {}

  static install(): RoundTripMeter {
    const meter = new RoundTripMeter();
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- pg ships no typings here
    const pg = require('pg') as PgModule;
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: unknown, ...args: unknown[]): unknown {
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === 'function') {
        const done = meter.started();
        args[last] = (...results: unknown[]) => {
          done();
          return (callback as (...results: unknown[]) => unknown)(...results);
        };
        return query.apply(this, args);
      }
      const done = meter.started();
      const submitted = query.apply(this, args);
      // A submittable (the library's pipelined message) is returned as is and settles `done`.
      const settles = isThenable(submitted)
        ? submitted
        : (submitted as { done?: unknown } | undefined)?.done;
      if (isThenable(settles)) settles.then(done, done);
      else done();
      return submitted;
    };
    return meter;
  }

  /** Milliseconds spent waiting on PostgreSQL since the meter was installed. */
  get waitedMs(): number {
    return this.busyMs + (this.inFlight > 0 ? performance.now() - this.busySince : 0);
  }

  private started(): () => void {
    if (this.inFlight++ === 0) this.busySince = performance.now();
    let settled = false;
    return () => {
      if (settled) return;
      settled = true;
      if (--this.inFlight === 0) this.busyMs += performance.now() - this.busySince;
    };
  }
}
