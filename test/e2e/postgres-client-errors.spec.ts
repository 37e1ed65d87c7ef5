import { HOUSEKEEPING_WORKFLOWS } from '../fixtures/housekeeping.workflows';
import { Order } from '../fixtures/order.entity';
import { IterationScript } from '../fixtures/resumable.workflows';
import { StepScript } from '../fixtures/step-script';
import { describeOn } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { testTransport } from './support/transport';

/** The part of node-postgres this test touches. */
interface PgClient {
  listenerCount(event: string): number;
  emit(event: string, error: Error): boolean;
  release(error?: Error): void;
}

/**
 * A connection error event must never crash the process (PostgresClientErrorGuard): pg-pool
 * removes its listener from a checked-out client and TypeORM adds its own a microtask later, so a
 * FATAL arriving in the same network read as the connection's ReadyForQuery used to be an
 * uncaught exception (found by test/reliability/database-trouble.spec.ts).
 */
describeOn('postgres')('PostgreSQL client errors (PostgreSQL)', () => {
  let harness: EngineHarness;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: HOUSEKEEPING_WORKFLOWS,
      providers: [StepScript, IterationScript],
      entities: [Order],
      // Nothing consumes: the test starts no workflow. The local transport refuses worker: false
      // (it would run nothing); with nothing started its worker does nothing either.
      options: testTransport === 'local' ? {} : { worker: false },
    });
  });

  afterAll(() => harness?.close());

  it('a new pool client checked out without a listener of its own survives an error event', async () => {
    const pool = (
      harness.dataSource.driver as unknown as {
        master: { connect(): Promise<PgClient>; totalCount: number };
      }
    ).master;
    // Fill the pool's idle clients first, so connect() below creates a new client.
    const clients: PgClient[] = [];
    for (let i = 0; i < 3; i++) clients.push(await pool.connect());
    const fresh = clients[clients.length - 1];
    expect(fresh.listenerCount('error')).toBeGreaterThanOrEqual(1);
    expect(() =>
      fresh.emit('error', new Error('terminating connection due to administrator command')),
    ).not.toThrow();
    fresh.release(new Error('discard'));
    for (const client of clients.slice(0, -1)) client.release();
    // The data source still works.
    await expect(harness.dataSource.query('SELECT 1 AS one')).resolves.toEqual([{ one: 1 }]);
  });
});
