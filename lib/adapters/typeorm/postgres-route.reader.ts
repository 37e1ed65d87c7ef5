import { lookup } from 'node:dns/promises';
import type { DataSource } from 'typeorm';
import type { DatabaseRoute } from '../../ports/workflow.repository';

const DEFAULT_PORT = 5432;

/** Where a PostgreSQL data source connects: its host (or socket directory) and port. */
interface ConnectionTarget {
  host: string;
  port: number;
}

/**
 * How a PostgreSQL data source reaches its server. The server reports the address and port it
 * answers on (`inet_server_addr()`, `inet_server_port()`); when they are the address (the host
 * resolved) and port the data source connects to, no pooler or proxy stands in between: one can
 * only listen on an address and port of its own. Anything else (another port or address, a Unix
 * socket, a replication set-up, a host that does not resolve) is not proven direct.
 */
export async function readPostgresRoute(dataSource: DataSource): Promise<DatabaseRoute> {
  const rows = await dataSource.query<Array<{ address: string | null; port: number | null }>>(
    'SELECT host(inet_server_addr()) AS address, inet_server_port() AS port',
  );
  const { address, port } = rows[0];
  const server = address === null ? null : hostPort(address, Number(port));
  const target = connectionTarget(dataSource);
  if (target === null) return { target: 'a replication set-up', server, direct: false };
  const socket = target.host.startsWith('/');
  const described = socket
    ? `the Unix socket in ${target.host}`
    : hostPort(target.host, target.port);
  if (address === null || socket) return { target: described, server, direct: false };
  const resolved: string[] = await lookup(target.host, { all: true }).then(
    (found) => found.map((entry) => normalized(entry.address)),
    () => [],
  );
  const direct = resolved.includes(normalized(address)) && Number(port) === target.port;
  return { target: described, server, direct };
}

/**
 * What the data source connects to, as node-postgres would: its `url` first (TypeORM lets it win
 * over the other options), then `host`/`port`, then PGHOST/PGPORT, then localhost:5432. Null
 * with replication (several servers).
 */
function connectionTarget(dataSource: DataSource): ConnectionTarget | null {
  const options = dataSource.options;
  if (options.type !== 'postgres' || options.replication) return null;
  if (options.url) {
    const url = new URL(options.url);
    // node-postgres percent-decodes the host: `%2Fvar%2Frun%2Fpostgresql` is a socket directory.
    return {
      host: decodeURIComponent(url.hostname.replace(/^\[(.*)\]$/, '$1')) || 'localhost',
      port: url.port ? Number(url.port) : DEFAULT_PORT,
    };
  }
  return {
    host: options.host ?? process.env.PGHOST ?? 'localhost',
    port: options.port ?? (process.env.PGPORT ? Number(process.env.PGPORT) : DEFAULT_PORT),
  };
}

/** IPv4-mapped IPv6 addresses as IPv4, lower case, so the two sides compare. */
function normalized(address: string): string {
  return address.toLowerCase().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');
}

function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
