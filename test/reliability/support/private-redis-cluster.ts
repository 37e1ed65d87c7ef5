import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port';
import { waitUntil } from './wait';

const run = promisify(execFile);

/** Milliseconds a master may be unreachable before its replica takes over. */
const NODE_TIMEOUT_MS = 2_000;

/** A node's redis-server exited before it answered PING; carries the tail of what it printed. */
class ServerExitedError extends Error {
  constructor(port: number, exitCode: number, output: string) {
    super(
      `redis-server on port ${port} exited with ${exitCode}: ${output.trim().split('\n').slice(-3).join(' | ')}`,
    );
  }
}

interface ClusterNode {
  port: number;
  busPort: number;
  dir: string;
  process: ChildProcess | null;
}

/**
 * A Redis Cluster of the scenario's own: three masters and a replica each (`--cluster-replicas 1`)
 * on free loopback ports, no persistence, a short node timeout so a killed master fails over in
 * seconds. Its masters can be SIGKILLed without touching the cluster or Redis other tests share.
 */
export class PrivateRedisCluster {
  /** Kills every node if the test process exits without stop(). */
  private readonly onExit = () => {
    for (const node of this.nodes) node.process?.kill('SIGKILL');
  };

  private constructor(
    private readonly nodes: ClusterNode[],
    private readonly root: string,
  ) {
    process.once('exit', this.onExit);
  }

  /** A node to connect through (ioredis discovers the others from it). */
  get port(): number {
    return this.nodes[0].port;
  }

  static async start(): Promise<PrivateRedisCluster> {
    const root = mkdtempSync(join(tmpdir(), 'gd-redis-cluster-'));
    const nodes: ClusterNode[] = [];
    for (let index = 0; index < 6; index++) {
      const dir = join(root, String(index));
      nodes.push({ port: await freePort(), busPort: await freePort(), dir, process: null });
    }
    const cluster = new PrivateRedisCluster(nodes, root);
    try {
      for (const node of nodes) await cluster.spawn(node);
      await run(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...nodes.map((node) => `127.0.0.1:${node.port}`),
          '--cluster-replicas',
          '1',
          '--cluster-yes',
        ],
        { timeout: 30_000 },
      );
      await cluster.untilHealthy(nodes, 30_000);
      await cluster.untilReplicasInSync(30_000);
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  /** The port of the master that serves `key`'s hash slot (for a hash tag: that tag's queues). */
  async masterOf(key: string): Promise<number> {
    const live = this.liveNodes()[0];
    const slot = Number(await this.cli(live.port, 'CLUSTER', 'KEYSLOT', key));
    for (const line of (await this.cli(live.port, 'CLUSTER', 'NODES')).split('\n')) {
      const [, address, flags, , , , , linkState, ...slots] = line.split(' ');
      if (
        !flags.split(',').includes('master') ||
        flags.includes('fail') ||
        linkState !== 'connected'
      )
        continue;
      const serves = slots.some((range) => {
        const [from, to = from] = range.split('-').map(Number);
        return slot >= from && slot <= to;
      });
      if (serves) return Number(address.split(':')[1].split('@')[0]);
    }
    throw new Error(`no connected master serves slot ${slot} of '${key}'`);
  }

  /** SIGKILLs the node on `port` and resolves once its process is gone. */
  async kill(port: number): Promise<void> {
    const node = this.nodes.find((candidate) => candidate.port === port);
    if (!node) throw new Error(`no node of the cluster on port ${port}`);
    await this.killNode(node);
  }

  /**
   * Resolves once a replica has taken over `key`'s slot from the killed master on `killedPort` and
   * every surviving node reports the cluster whole again; resolves the new master's port.
   */
  async untilFailedOver(key: string, killedPort: number, timeoutMs = 30_000): Promise<number> {
    let promoted = killedPort;
    await waitUntil(
      `a replica to take over the slot of '${key}' from port ${killedPort}`,
      async () => {
        promoted = await this.masterOf(key);
        return promoted !== killedPort;
      },
      timeoutMs,
      100,
    );
    await this.untilHealthy(this.liveNodes(), timeoutMs);
    return promoted;
  }

  async stop(): Promise<void> {
    process.off('exit', this.onExit);
    for (const node of this.nodes) await this.killNode(node);
    rmSync(this.root, { recursive: true, force: true });
  }

  private liveNodes(): ClusterNode[] {
    return this.nodes.filter((node) => node.process !== null);
  }

  private async untilHealthy(nodes: ClusterNode[], timeoutMs: number): Promise<void> {
    await waitUntil(
      'the Redis Cluster to report cluster_state:ok on every live node',
      async () => {
        for (const node of nodes) {
          const info = await this.cli(node.port, 'CLUSTER', 'INFO');
          if (!/^cluster_state:ok/m.test(info)) return false;
        }
        return true;
      },
      timeoutMs,
      100,
    );
  }

  /**
   * Resolves once each master has a replica with its replication link up: a replica that never
   * synced refuses to take over (its data would be too old), whatever cluster_state says.
   */
  private async untilReplicasInSync(timeoutMs: number): Promise<void> {
    await waitUntil(
      'every replica of the Redis Cluster to be in sync with its master',
      async () => {
        let synced = 0;
        for (const node of this.nodes) {
          const info = await this.cli(node.port, 'INFO', 'replication');
          if (/^role:slave/m.test(info) && /^master_link_status:up/m.test(info)) synced += 1;
        }
        return synced === this.nodes.length / 2;
      },
      timeoutMs,
      100,
    );
  }

  /**
   * Starts the node's server; before the cluster is created a node whose server exits (its port
   * taken by a listener since the probe) moves to fresh ports, up to three times.
   */
  private async spawn(node: ClusterNode): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.spawnOnce(node);
      } catch (error) {
        if (!(error instanceof ServerExitedError) || attempt === 3) throw error;
        node.port = await freePort();
        node.busPort = await freePort();
      }
    }
  }

  private async spawnOnce(node: ClusterNode): Promise<void> {
    mkdirSync(node.dir, { recursive: true });
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(node.port),
        '--cluster-port',
        String(node.busPort),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(node.dir, 'nodes.conf'),
        '--cluster-node-timeout',
        String(NODE_TIMEOUT_MS),
        '--dir',
        node.dir,
        '--save',
        '',
        '--appendonly',
        'no',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const keepTail = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-2_000));
    child.stdout?.on('data', keepTail);
    child.stderr?.on('data', keepTail);
    node.process = child;
    // waitUntil retries a probe that throws, so an exited server ends the wait by answering true.
    await waitUntil(
      `redis-server on port ${node.port}`,
      async () => child.exitCode !== null || (await this.cli(node.port, 'PING')) === 'PONG',
    );
    if (child.exitCode !== null) {
      node.process = null;
      throw new ServerExitedError(node.port, child.exitCode, output);
    }
  }

  private async killNode(node: ClusterNode): Promise<void> {
    const child = node.process;
    node.process = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** One command through redis-cli on the node at `port`; resolves its trimmed output. */
  private async cli(port: number, ...args: string[]): Promise<string> {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
      timeout: 5_000,
    });
    return stdout.trim();
  }
}
