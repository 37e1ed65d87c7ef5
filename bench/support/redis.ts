import { RedisConnection, type RedisClient } from 'bullmq';

/** The Redis every benchmark uses (the module's default connection). */
export const REDIS_CONNECTION = { host: '127.0.0.1', port: 6379 };

/**
 * Runs `work` with a Redis client from BullMQ's own connection class (so the benchmarks need no
 * Redis driver of their own, and nothing is written the way a queue handle writes its meta key),
 * then closes it.
 */
export async function withRedis<T>(work: (client: RedisClient) => Promise<T>): Promise<T> {
  const connection = new RedisConnection(REDIS_CONNECTION);
  try {
    return await work(await connection.client);
  } finally {
    await connection.close();
  }
}

/** How many Redis keys start with `prefix:` (BullMQ keys every queue under its prefix). */
export function countKeys(client: RedisClient, prefix: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let count = 0;
    client
      .scanStream({ match: `${prefix}:*`, count: 1000 })
      .on('data', (keys: string[]) => (count += keys.length))
      .on('end', () => resolve(count))
      .on('error', reject);
  });
}
