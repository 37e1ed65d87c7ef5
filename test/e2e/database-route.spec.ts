import { createServer, connect, type Server } from 'node:net';
import { DataSource } from 'typeorm';
import { readPostgresRoute } from '../../lib/adapters/typeorm/postgres-route.reader';
import { WorkflowRepository } from '../../lib/ports/workflow.repository';
import { postgresConnection, testDatabase, testPooler } from './support/database';
import { describeIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';

/** A plain TCP relay to PostgreSQL on a port of its own: what a pooler looks like from outside. */
function relayTo(port: number): Promise<Server> {
  const relay = createServer((client) => {
    const server = connect(port, postgresConnection.host);
    client.pipe(server).pipe(client);
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
  });
  return new Promise((resolve) => relay.listen(0, '127.0.0.1', () => resolve(relay)));
}

async function routeOver(options: { url: string } | { host: string; port: number }) {
  const dataSource = new DataSource({ ...postgresConnection, ...options, type: 'postgres' });
  await dataSource.initialize();
  try {
    return await readPostgresRoute(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

describe('how the data source reaches its database (doctor: statements)', () => {
  it('the repository tells on PostgreSQL only, and proves a direct connection only without a pooler', async () => {
    const harness = await EngineHarness.boot({ workflows: [] });
    try {
      const route = await harness.get(WorkflowRepository).databaseRoute();
      if (testDatabase !== 'postgres') {
        expect(route).toBeNull();
        return;
      }
      expect(route).toMatchObject({
        target: `${postgresConnection.host}:${postgresConnection.port}`,
        direct: testPooler === null,
      });
      expect(route?.server).toMatch(/:\d+$/);
    } finally {
      await harness.close();
    }
  });

  // Straight to PostgreSQL: the suite's own port is PgBouncer's in the pooler run.
  describeIf(testDatabase === 'postgres' && testPooler === null)('on PostgreSQL', () => {
    it('a connection URL with a host name that resolves to the server is direct', async () => {
      const route = await routeOver({
        url: `postgres://${postgresConnection.username}@localhost:${postgresConnection.port}/${postgresConnection.database}`,
      });
      expect(route).toMatchObject({ target: `localhost:${postgresConnection.port}`, direct: true });
    });

    it('a connection URL naming a Unix socket directory (percent-encoded, as node-postgres reads it) is not proven direct', async () => {
      const route = await routeOver({
        url: `postgres://${postgresConnection.username}@%2Fvar%2Frun%2Fpostgresql:${postgresConnection.port}/${postgresConnection.database}`,
      });
      expect(route).toMatchObject({
        target: 'the Unix socket in /var/run/postgresql',
        server: null,
        direct: false,
      });
    });

    it('a relay on another port is not: the server answers on an address and port of its own', async () => {
      const relay = await relayTo(postgresConnection.port);
      try {
        const port = (relay.address() as { port: number }).port;
        const route = await routeOver({ host: '127.0.0.1', port });
        expect(route).toEqual({
          target: `127.0.0.1:${port}`,
          server: `127.0.0.1:${postgresConnection.port}`,
          direct: false,
        });
      } finally {
        relay.close();
      }
    });
  });
});
