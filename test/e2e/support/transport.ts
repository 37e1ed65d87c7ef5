import { Queue, createPostgresBackend } from 'bullmq';
import { DataSource } from 'typeorm';
import type { GenevaDriveModuleOptions } from '../../../lib';
import { bullmqSchemaFor } from '../../../lib/adapters/bullmq-postgres/postgres-transport.connection';
import { postgresConnection, testDatabase } from './database';

/**
 * The transport the harness boots its apps on: Redis (default); BullMQ's PostgreSQL backend
 * with GENEVA_TEST_TRANSPORT=postgres (`.ci/run`'s test-postgres-transport stage), in the test
 * database, one BullMQ schema per harness prefix; or the in-process queue with
 * GENEVA_TEST_TRANSPORT=local (the test-local-transport stages), on any GENEVA_TEST_DB, with the
 * Redis connection pointed at a closed port. Specs that need Redis itself, or BullMQ jobs, or
 * several processes on one queue, by their nature skip themselves where those do not exist
 * (`describeIf(testTransport === 'redis')`, `describeIf(testTransport !== 'local')`, saying why).
 */
export type TestTransport = 'redis' | 'postgres' | 'local';

function readTestTransport(): TestTransport {
  const value = (process.env.GENEVA_TEST_TRANSPORT ?? '').toLowerCase();
  if (value === '' || value === 'redis') return 'redis';
  if (value === 'local') return value;
  if (value !== 'postgres') {
    throw new Error(
      `GENEVA_TEST_TRANSPORT must be redis, postgres, local or unset, not '${value}'.`,
    );
  }
  if (testDatabase !== 'postgres') {
    throw new Error(
      `GENEVA_TEST_TRANSPORT=postgres needs GENEVA_TEST_DB=postgres, not '${testDatabase}'.`,
    );
  }
  if (typeof createPostgresBackend !== 'function') {
    throw new Error('GENEVA_TEST_TRANSPORT=postgres needs BullMQ 6 (its PostgreSQL backend).');
  }
  return value;
}

export const testTransport: TestTransport = readTestTransport();

/** Nothing listens there: an app on the local transport must never need Redis. */
const NO_REDIS = { host: '127.0.0.1', port: 1 };

/** Module options of the harness's transport ({} on Redis: the harness's connection applies). */
export function transportOptions(): GenevaDriveModuleOptions {
  switch (testTransport) {
    case 'redis':
      return {};
    case 'postgres':
      // {} stands for "the data source's database" (past the harness's Redis default).
      return { transport: 'postgres', connection: {} };
    case 'local':
      return { transport: 'local', connection: NO_REDIS };
  }
}

/**
 * A BullMQ handle on a harness's queue on the PostgreSQL transport. Typed as a Redis `Queue`,
 * which the specs use: both are BullMQ's `Queue` class, only the backend differs.
 */
export function postgresTransportQueue(name: string, prefix: string): Queue {
  const { host, port, username: user, password, database } = postgresConnection;
  const connection = { host, port, user, password, database, schema: bullmqSchemaFor(prefix) };
  return new Queue(name, { connection }, createPostgresBackend) as unknown as Queue;
}

/** Drops the BullMQ schema of a stopped deployment on the PostgreSQL transport. */
export async function dropTransportSchema(prefix: string): Promise<void> {
  const admin = await new DataSource(postgresConnection).initialize();
  try {
    // A plain identifier by construction (bullmqSchemaFor).
    await admin.query(`DROP SCHEMA IF EXISTS "${bullmqSchemaFor(prefix)}" CASCADE`);
  } finally {
    await admin.destroy();
  }
}
