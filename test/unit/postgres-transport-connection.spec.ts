import {
  bullmqSchemaFor,
  postgresTransportConnection,
} from '../../lib/adapters/bullmq-postgres/postgres-transport.connection';
import { ModuleOptionsError } from '../../lib';
import { resolveModuleOptions } from '../../lib/options/resolve-module-options';
import { describeTransport } from '../../lib/queue/transport-outage';

describe("transport 'postgres': BullMQ's connection", () => {
  const dataSource = {
    type: 'postgres' as const,
    host: 'db.internal',
    port: 5433,
    username: 'app',
    password: 'secret',
    database: 'orders',
  };

  it.each([
    ['geneva-drive', 'geneva_drive_bullmq'],
    ['{tenant-a}', '_tenant_a__bullmq'],
    ['1st', '_1st_bullmq'],
    ['Mixed.Case', 'mixed_case_bullmq'],
  ])('the prefix %p names the schema %p', (prefix, schema) => {
    expect(bullmqSchemaFor(prefix)).toBe(schema);
  });

  it('keeps a schema name within 63 characters', () => {
    expect(bullmqSchemaFor('p'.repeat(100))).toHaveLength(63);
  });

  it("defaults to the data source's database, migrated by BullMQ on connect", () => {
    expect(postgresTransportConnection({}, dataSource, 'geneva-drive')).toEqual({
      host: 'db.internal',
      port: 5433,
      user: 'app',
      password: 'secret',
      database: 'orders',
      migrate: true,
      schema: 'geneva_drive_bullmq',
    });
  });

  it("takes the data source's url as the connection string", () => {
    expect(
      postgresTransportConnection({}, { type: 'postgres', url: 'postgres://a@h/db' }, 'p'),
    ).toEqual({ connectionString: 'postgres://a@h/db', migrate: true, schema: 'p_bullmq' });
  });

  it('a given connection wins, with its own schema if it names one', () => {
    expect(
      postgresTransportConnection(
        { connectionString: 'postgres://q@queue-db/jobs', schema: 'jobs', migrate: false },
        dataSource,
        'geneva-drive',
      ),
    ).toEqual({ connectionString: 'postgres://q@queue-db/jobs', schema: 'jobs', migrate: false });
  });

  it('refuses a data source that is not PostgreSQL when no connection is given', () => {
    expect(() =>
      postgresTransportConnection({}, { type: 'mariadb', database: 'x' }, 'geneva-drive'),
    ).toThrow(ModuleOptionsError);
    expect(() =>
      postgresTransportConnection({}, { type: 'mariadb', database: 'x' }, 'geneva-drive'),
    ).toThrow(/that data source is mariadb/);
  });

  it('resolves with no Redis default, and names the transport in outage messages', () => {
    const resolved = resolveModuleOptions({ transport: 'postgres' });
    expect(resolved).toMatchObject({ transport: 'postgres', connection: {} });
    expect(describeTransport(resolved)).toBe("BullMQ on PostgreSQL in the data source's database");
    expect(
      describeTransport({ transport: 'postgres', connection: { host: 'q', port: 6432 } }),
    ).toBe('BullMQ on PostgreSQL at q:6432');
    expect(
      describeTransport({
        transport: 'postgres',
        connection: { connectionString: 'postgres://u:pw@queue-db:5432/jobs' },
      }),
    ).toBe('BullMQ on PostgreSQL at queue-db:5432');
    expect(describeTransport(resolveModuleOptions({}))).toBe('Redis at 127.0.0.1:6379');
  });
});
