import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import type { GenevaDriveModuleOptions } from '../../../lib';

/**
 * The Redis the e2e suite runs on: the machine's single Redis (127.0.0.1:6379), or a Redis Cluster
 * when GENEVA_TEST_REDIS_CLUSTER=host:port names one of its nodes (test/redis-cluster/start.sh,
 * .ci/run's test-redis-cluster stage). On the cluster every app and queue handle of a harness
 * connects through an ioredis `Cluster` and every BullMQ prefix has a hash tag, as the README asks
 * of users. Specs that cannot run on a cluster by their nature skip themselves there
 * (`describeIf(testRedisCluster === null)`, saying why).
 */
export const testRedisCluster: { host: string; port: number } | null = readTestRedisCluster();

function readTestRedisCluster(): { host: string; port: number } | null {
  const value = process.env.GENEVA_TEST_REDIS_CLUSTER ?? '';
  if (value === '') return null;
  const match = /^([^:]+):(\d+)$/.exec(value);
  if (!match) {
    throw new Error(
      `GENEVA_TEST_REDIS_CLUSTER must be host:port of a cluster node, not '${value}'.`,
    );
  }
  return { host: match[1], port: Number(match[2]) };
}

/** For describe titles: "Redis" or "Redis Cluster". */
export const testRedisLabel = testRedisCluster ? 'Redis Cluster' : 'Redis';

/** A fresh BullMQ prefix `<name>-<8 hex>`, in braces on the cluster (one hash slot per queue). */
export function testPrefix(name = 'gd-test'): string {
  const prefix = `${name}-${randomBytes(4).toString('hex')}`;
  return testRedisCluster ? `{${prefix}}` : prefix;
}

/** One Redis connection of a test deployment: what its app and queue handles are given. */
export interface TestRedisConnection {
  /** The module's `connection` option (and BullMQ's): plain options, or an ioredis Cluster. */
  readonly connection: NonNullable<GenevaDriveModuleOptions['connection']>;
  /** Quits the Cluster client, once the apps and queues using it are closed (BullMQ does not). */
  release(): Promise<void>;
}

/** Plain options for the single Redis; a new ioredis Cluster client (its owner releases it) on the cluster. */
export function openTestRedis(): TestRedisConnection {
  if (!testRedisCluster) {
    return { connection: { host: '127.0.0.1', port: 6379 }, release: () => Promise.resolve() };
  }
  const cluster = new Cluster([testRedisCluster]);
  return {
    connection: cluster,
    release: async () => {
      if (cluster.status !== 'end') await cluster.quit();
    },
  };
}
