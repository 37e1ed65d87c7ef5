import { createServer } from 'node:net';

/**
 * Ports are drawn below Linux's ephemeral range (32768-60999 by default): a port the kernel hands
 * to `listen(0)` is also one it hands to outgoing connections as their local port, so between our
 * probe and the server's own bind a client socket could take it (a private Redis Cluster node then
 * exited with 1). Below that range only listeners compete, and the probe sees those.
 */
const FIRST_PORT = 20_000;
const LAST_PORT = 32_000;

/** Ports this process has handed out already: two nodes of one cluster never get the same one. */
const handedOut = new Set<number>();

/** A TCP port on 127.0.0.1 that nothing listens on right now and this process has not handed out. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const port = FIRST_PORT + Math.floor(Math.random() * (LAST_PORT - FIRST_PORT));
    if (handedOut.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(
    `no free port on 127.0.0.1 between ${FIRST_PORT} and ${LAST_PORT} after 200 tries`,
  );
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
