import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { GenevaDriveDataSource } from './geneva-drive-data-source';

/** The part of a node-postgres Pool and Client this guard uses. */
interface ErrorEmitter {
  on(event: string, listener: (...args: unknown[]) => void): unknown;
}

/** Pools already guarded (two library instances may share one DataSource). */
const guardedPools = new WeakSet<object>();

const ignore = (): void => undefined;

/**
 * Keeps a dropped PostgreSQL connection from crashing the process. node-postgres reports a lost
 * connection as an `error` event on its `Client`, and an `error` event nobody listens to is an
 * uncaught exception. pg-pool removes its own listener while a client is checked out, and
 * TypeORM adds its listener one microtask after the checkout, so when the server's
 * ReadyForQuery and a FATAL (`pg_terminate_backend`, a server shutdown or failover) arrive in
 * one network read, the error is emitted in between and takes the worker down. Found by the
 * fault-injection suite (test/reliability/database-trouble.spec.ts).
 *
 * Every new client of the data source's pools therefore gets a listener of its own, for its whole
 * life. It only keeps the event from being fatal: whoever uses the connection still sees the
 * failure (the query rejects, TypeORM releases the client with the error) and the pool discards
 * the client. Clients created before bootstrap are not new when they are checked out, so the race
 * cannot happen to them.
 */
@Injectable()
export class PostgresClientErrorGuard implements OnApplicationBootstrap {
  constructor(private readonly database: GenevaDriveDataSource) {}

  onApplicationBootstrap(): void {
    if (this.database.family !== 'postgres') return;
    const driver = this.database.dataSource.driver as unknown as {
      master?: ErrorEmitter;
      slaves?: ErrorEmitter[];
    };
    for (const pool of [driver.master, ...(driver.slaves ?? [])]) {
      if (!pool || typeof pool.on !== 'function' || guardedPools.has(pool)) continue;
      guardedPools.add(pool);
      pool.on('connect', (client) => (client as ErrorEmitter).on('error', ignore));
    }
  }
}
