import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { freePort } from './free-port';
import { sleep, waitUntil } from './wait';

const run = promisify(execFile);

/**
 * A Redis server of the scenario's own (loopback, no persistence), so it can be flushed, killed
 * and restarted without touching the Redis other tests share.
 */
export class PrivateRedis {
  private process: ChildProcess | null = null;
  /** Kills the server if the test process exits without stop(). */
  private readonly onExit = () => this.process?.kill('SIGKILL');

  private constructor(readonly port: number) {
    process.once('exit', this.onExit);
  }

  static async start(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort());
    await redis.spawn();
    return redis;
  }

  /** Deletes every key (BullMQ's queues, jobs and locks included). */
  async flushAll(): Promise<void> {
    await this.cli('FLUSHALL');
  }

  /** SIGKILLs the server; it comes back empty after `downMs`. */
  async restart(downMs: number): Promise<void> {
    await this.kill();
    await sleep(downMs);
    await this.spawn();
  }

  /** SIGSTOPs the server: connections stay open and nothing answers (a hung Redis), until thaw(). */
  freeze(): void {
    this.process?.kill('SIGSTOP');
  }

  /** SIGCONTs a frozen server: it answers again with everything it held. */
  thaw(): void {
    this.process?.kill('SIGCONT');
  }

  async stop(): Promise<void> {
    process.off('exit', this.onExit);
    await this.kill();
  }

  private async spawn(): Promise<void> {
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.process = child;
    await waitUntil(`redis-server on port ${this.port}`, async () => {
      if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
      return (await this.cli('PING')) === 'PONG';
    });
  }

  private async kill(): Promise<void> {
    const child = this.process;
    this.process = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /** One command through redis-cli; resolves its trimmed output. */
  async cli(...args: string[]): Promise<string> {
    const { stdout } = await run(
      'redis-cli',
      ['-h', '127.0.0.1', '-p', String(this.port), ...args],
      {
        timeout: 5_000,
      },
    );
    return stdout.trim();
  }
}
