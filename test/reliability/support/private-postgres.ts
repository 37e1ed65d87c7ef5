import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port';
import { sleep } from './wait';

const run = promisify(execFile);

/** The directory holding initdb and pg_ctl: PG_BINDIR, or the newest /usr/lib/postgresql/N/bin. */
function binDir(): string {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR;
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((version) => existsSync(join(root, version, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    throw new Error(
      'No PostgreSQL server binaries found (set PG_BINDIR to the directory of initdb and pg_ctl).',
    );
  }
  return join(root, versions[0], 'bin');
}

/**
 * A PostgreSQL cluster of the scenario's own: initdb into a temporary directory, started on a
 * free loopback port with trust authentication and no fsync, so the scenario can terminate its
 * backends and restart it without touching the database other tests share. initdb refuses to run
 * as root, so as root (CI) every command runs as the `postgres` user through runuser.
 */
export class PrivatePostgres {
  /** Stops the server if the test process exits without stop() (a failed or interrupted run). */
  private readonly onExit = () => {
    try {
      execFileSync(...this.command('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', 'stop']), {
        stdio: 'ignore',
        timeout: 10_000,
      });
    } catch {
      // not running
    }
    rmSync(this.dir, { recursive: true, force: true });
  };

  private constructor(
    private readonly dir: string,
    readonly port: number,
    private readonly bin: string,
  ) {
    process.once('exit', this.onExit);
  }

  static async start(): Promise<PrivatePostgres> {
    const bin = binDir();
    const dir = mkdtempSync(join(tmpdir(), 'geneva-reliability-pg-'));
    if (process.getuid?.() === 0) {
      const uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
      const gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
      chownSync(dir, uid, gid);
    }
    const cluster = new PrivatePostgres(dir, await freePort(), bin);
    try {
      await cluster.pg('initdb', [
        '-D',
        cluster.dataDir,
        '-A',
        'trust',
        '-U',
        'postgres',
        '--no-sync',
        '-E',
        'UTF8',
      ]);
      await cluster.startServer();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** The whole cluster goes down at once (`-m immediate`: a crash), and restarts after `downMs`. */
  async restart(downMs: number): Promise<void> {
    await this.pg('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']);
    await sleep(downMs);
    await this.startServer();
  }

  async stop(): Promise<void> {
    process.off('exit', this.onExit);
    try {
      if (existsSync(join(this.dataDir, 'postmaster.pid'))) {
        await this.pg('pg_ctl', ['-D', this.dataDir, '-m', 'immediate', '-w', 'stop']);
      }
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  /** The server log (printed when a scenario fails to start it). */
  log(): string {
    const file = join(this.dir, 'server.log');
    return existsSync(file) ? readFileSync(file, 'utf8') : '';
  }

  private get dataDir(): string {
    return join(this.dir, 'data');
  }

  private async startServer(): Promise<void> {
    const settings = [
      `-p ${this.port}`,
      `-k ${this.dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c full_page_writes=off',
      '-c max_connections=200',
    ].join(' ');
    await this.pg('pg_ctl', [
      '-D',
      this.dataDir,
      '-l',
      join(this.dir, 'server.log'),
      '-o',
      settings,
      '-w',
      '-t',
      '30',
      'start',
    ]);
  }

  private async pg(command: string, args: string[]): Promise<void> {
    await run(...this.command(command, args), { timeout: 60_000, cwd: this.dir });
  }

  /** The executable and arguments of a server command, as the postgres user when we are root. */
  private command(command: string, args: string[]): [string, string[]] {
    const path = join(this.bin, command);
    return process.getuid?.() === 0
      ? ['runuser', ['-u', 'postgres', '--', path, ...args]]
      : [path, args];
  }
}
