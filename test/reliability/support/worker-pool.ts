import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { ReliabilityAppOptions } from './reliability-module';
import type { WorkerCommand, WorkerMessage, WorkerRequest } from './worker-process';

/** A command's failure in the child, rethrown in the parent with the child's error name. */
export class WorkerCommandError extends Error {
  constructor(
    readonly errorName: string,
    message: string,
  ) {
    super(message);
    this.name = errorName;
  }
}

let nextRequestId = 1;

const WORKER_ENTRY = join(__dirname, 'worker-process.ts');
const TRANSPILE_HOOK = join(__dirname, 'transpile-cache.js');
const BOOT_TIMEOUT_MS = 60_000;
const OUTPUT_LINES = 200;

/** How a worker child ended. */
export interface WorkerExit {
  name: string;
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The parent sent the signal (kill, terminate) rather than the child dying on its own. */
  requested: boolean;
  /** The child reported the end of a graceful shutdown (onApplicationShutdown). */
  stoppedGracefully: boolean;
  output: string[];
}

/** One running worker child. */
export class WorkerHandle {
  readonly output: string[] = [];
  readonly exited: Promise<WorkerExit>;
  stoppedGracefully = false;
  requested = false;
  /** Booted and not yet asked to stop. */
  ready = false;
  /** Commands sent and not yet answered, by request id. */
  readonly pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();

  constructor(
    readonly name: string,
    readonly child: ChildProcess,
  ) {
    const keep = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) {
        if (line.trim() === '') continue;
        this.output.push(line);
        if (this.output.length > OUTPUT_LINES) this.output.shift();
      }
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.on('message', (message: WorkerMessage) => {
      if (message.type === 'stopped') this.stoppedGracefully = true;
      if (message.type !== 'result') return;
      const request = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.ok) request?.resolve(message.value);
      else request?.reject(new WorkerCommandError(message.error.name, message.error.message));
    });
    child.once('exit', () => {
      for (const request of this.pending.values()) request.reject(new Error(`${name} exited`));
      this.pending.clear();
    });
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) =>
        resolve({
          name,
          pid: this.pid,
          code,
          signal,
          requested: this.requested,
          stoppedGracefully: this.stoppedGracefully,
          output: this.output,
        }),
      ),
    );
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** The process is still running (booting, working or shutting down). */
  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }
}

/**
 * Worker children of one scenario: started through a caching transpile hook with the scenario's
 * options, SIGKILLed or SIGTERMed on request, and watched for exits nobody asked for. Keeps a log
 * of what it did, for the scenario's report.
 */
export class WorkerPool {
  readonly workers = new Map<string, WorkerHandle>();
  /** Pids the pool SIGKILLed (their steps may legitimately run again). */
  readonly killedPids = new Set<number>();
  /** Exits the pool did not cause. */
  readonly unexpectedExits: WorkerExit[] = [];
  readonly actions: string[] = [];
  private readonly startedAt = Date.now();
  private stopping = false;

  /**
   * @param supervise restart a worker that exits on its own (as a process supervisor would), so
   * one crash does not starve the rest of the scenario; the exit is still recorded.
   */
  constructor(
    private readonly optionsFor: (name: string) => ReliabilityAppOptions,
    private readonly supervise = true,
  ) {}

  /** Starts (or restarts) the named worker and resolves once it has booted. */
  async start(name: string): Promise<WorkerHandle> {
    const child = fork(WORKER_ENTRY, [], {
      execArgv: ['-r', TRANSPILE_HOOK],
      env: {
        ...process.env,
        RELIABILITY_WORKER: JSON.stringify(this.optionsFor(name)),
      },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    const handle = new WorkerHandle(name, child);
    this.workers.set(name, handle);
    void handle.exited.then((exit) => {
      if (!exit.requested) {
        this.unexpectedExits.push(exit);
        this.log(
          `${name} (pid ${exit.pid}) exited on its own: code ${exit.code}, signal ${exit.signal}; last output:\n` +
            exit.output
              .slice(-90)
              .map((line) => `      | ${line}`)
              .join('\n'),
        );
        if (this.supervise && !this.stopping) {
          this.start(name).catch((error: unknown) =>
            this.log(`restart of ${name} failed: ${String(error)}`),
          );
        }
      }
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `${name} did not boot within ${BOOT_TIMEOUT_MS} ms:\n${handle.output.join('\n')}`,
            ),
          ),
        BOOT_TIMEOUT_MS,
      );
      child.on('message', (message: WorkerMessage) => {
        if (message.type !== 'ready') return;
        clearTimeout(timer);
        handle.ready = true;
        resolve();
      });
      void handle.exited.then((exit) => {
        clearTimeout(timer);
        if (!handle.ready)
          reject(
            new Error(`${name} exited during boot (code ${exit.code}):\n${exit.output.join('\n')}`),
          );
      });
    });
    this.log(`started ${name} (pid ${handle.pid})`);
    return handle;
  }

  /** Runs a command in the named child and resolves its result (rejects with its error). */
  call<T = unknown>(name: string, command: WorkerCommand): Promise<T> {
    const handle = this.require(name);
    const id = nextRequestId++;
    return new Promise<T>((resolve, reject) => {
      handle.pending.set(id, { resolve: (value) => resolve(value as T), reject });
      handle.child.send({ ...command, type: 'command', id } satisfies WorkerRequest);
    });
  }

  /** SIGKILLs the named worker and resolves once it is gone. */
  async kill(name: string): Promise<WorkerExit> {
    const handle = this.require(name);
    handle.requested = true;
    handle.ready = false;
    this.killedPids.add(handle.pid);
    handle.child.kill('SIGKILL');
    const exit = await handle.exited;
    this.log(`SIGKILL ${name} (pid ${exit.pid})`);
    return exit;
  }

  /** SIGTERMs the named worker (graceful shutdown) and resolves once it has exited. */
  async terminate(name: string, timeoutMs = 30_000): Promise<WorkerExit & { ms: number }> {
    const handle = this.require(name);
    handle.requested = true;
    handle.ready = false;
    const sentAt = Date.now();
    this.log(`SIGTERM ${name} (pid ${handle.pid})`);
    handle.child.kill('SIGTERM');
    const timer = setTimeout(() => handle.child.kill('SIGKILL'), timeoutMs);
    const exit = await handle.exited;
    clearTimeout(timer);
    const ms = Date.now() - sentAt;
    this.log(
      `${name} (pid ${exit.pid}) exited ${ms} ms after SIGTERM (${exit.stoppedGracefully ? 'graceful shutdown completed' : 'NOT graceful'})`,
    );
    return { ...exit, ms };
  }

  /** Stops every worker still running (SIGTERM, SIGKILL after 10 s). */
  async stopAll(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.workers.values()]
        .filter((handle) => handle.alive)
        .map((handle) => this.terminate(handle.name, 10_000)),
    );
  }

  /** Every pid that ever ran under `name`-prefixed workers, for reports. */
  pids(): number[] {
    return [...this.workers.values()].map((handle) => handle.pid);
  }

  log(action: string): void {
    const seconds = ((Date.now() - this.startedAt) / 1000).toFixed(1);
    this.actions.push(`+${seconds}s ${action}`);
  }

  private require(name: string): WorkerHandle {
    const handle = this.workers.get(name);
    if (!handle) throw new Error(`no worker named ${name}`);
    return handle;
  }
}
