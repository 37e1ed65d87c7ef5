/**
 * A TCP relay that holds every chunk for a while in each direction: PostgreSQL across a network,
 * for figures that depend on round trips (bench/README "What a network adds"). Node's timers
 * count whole milliseconds, so the shortest hold is 1 ms (a 2 ms round trip); chunks keep their
 * order (timers of one delay fire in the order they were set).
 *
 *   node bench/.build/bench/support/latency-proxy.js <listen port> <hold ms> [target port]
 *   PGPORT=<listen port> node bench/.build/bench/signal-wake.bench.js
 */
import { createServer, connect, type Socket } from 'node:net';

function relay(from: Socket, to: Socket, holdMs: number): void {
  from.on('data', (chunk) => setTimeout(() => to.write(chunk), holdMs));
}

function main(): void {
  const [listenPort, holdMs, targetPort = 5432] = process.argv.slice(2).map(Number);
  if (![listenPort, holdMs, targetPort].every((n) => Number.isSafeInteger(n) && n > 0)) {
    console.error('usage: latency-proxy <listen port> <hold ms> [target port (5432)]');
    process.exit(2);
  }
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    relay(client, upstream, holdMs);
    relay(upstream, client, holdMs);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on('close', close);
      socket.on('error', close);
    }
  });
  server.listen(listenPort, '127.0.0.1', () =>
    console.error(
      `latency-proxy: 127.0.0.1:${listenPort} -> :${targetPort}, ${holdMs} ms each way`,
    ),
  );
}

main();
