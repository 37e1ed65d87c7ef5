import { performance } from 'node:perf_hooks';
import type { DataSource } from 'typeorm';
import type { PgClient } from '../../lib/adapters/postgres/postgres-pipeline';
import { Order } from '../../test/fixtures/order.entity';
import { createOrders, qualifiedTable } from './dataset';
import { percentile, round } from './stats';

/**
 * The p50 in ms of the cheapest durable write: one row's UPDATE committed on its own (one
 * message, autocommit), `count` times one after another on a bare node-postgres client of
 * `dataSource`'s pool. A step's completion must be committed before its successor is enqueued, so
 * no engine's step, whatever its statements, comes back from PostgreSQL sooner.
 */
export async function commitRoundTripP50Ms(dataSource: DataSource, count = 200): Promise<number> {
  const [order] = await createOrders(dataSource, 1);
  const text = `UPDATE ${qualifiedTable(dataSource, Order)} SET status = $1 WHERE id = $2`;
  const runner = dataSource.createQueryRunner();
  try {
    const client = (await runner.connect()) as PgClient;
    const samples: number[] = [];
    for (let index = 0; index < count; index++) {
      const startedAt = performance.now();
      await (client.query({ text, values: [`s${index}`, order.id] }) as Promise<unknown>);
      samples.push(performance.now() - startedAt);
    }
    return round(percentile(samples, 50));
  } finally {
    await runner.release();
  }
}
