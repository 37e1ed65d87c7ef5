import { createPostgresBackend } from 'bullmq';

/**
 * The transport the fault-injection scenarios run their apps on: BullMQ on the scenario's private
 * Redis (default), or BullMQ's PostgreSQL backend with GENEVA_RELIABILITY_TRANSPORT=postgres
 * (`.ci/run`'s test-reliability-postgres-transport stage), its jobs in a BullMQ schema of the
 * scenario's private PostgreSQL cluster and no Redis at all: a PostgreSQL fault then hits the
 * workflows' state and their queue at once. Scenarios about Redis itself skip themselves there.
 */
export type ReliabilityTransport = 'redis' | 'postgres';

function readReliabilityTransport(): ReliabilityTransport {
  const value = (process.env.GENEVA_RELIABILITY_TRANSPORT ?? '').toLowerCase();
  if (value === '' || value === 'redis') return 'redis';
  if (value !== 'postgres') {
    throw new Error(
      `GENEVA_RELIABILITY_TRANSPORT must be redis, postgres or unset, not '${value}'.`,
    );
  }
  if (typeof createPostgresBackend !== 'function') {
    throw new Error(
      'GENEVA_RELIABILITY_TRANSPORT=postgres needs BullMQ 6 (its PostgreSQL backend).',
    );
  }
  return value;
}

export const reliabilityTransport: ReliabilityTransport = readReliabilityTransport();

/** For scenario titles and reports: "on Redis", "on the PostgreSQL transport". */
export const transportLabel =
  reliabilityTransport === 'postgres' ? 'on the PostgreSQL transport' : 'on Redis';

/**
 * `describe` for a scenario that needs Redis by its nature (Redis flushed, a Redis Cluster
 * failover, Redis key counts), a skipped describe on the PostgreSQL transport. A function: the
 * worker children load this file too, outside jest.
 */
export function describeOnRedis(): jest.Describe {
  return reliabilityTransport === 'redis' ? describe : describe.skip;
}
