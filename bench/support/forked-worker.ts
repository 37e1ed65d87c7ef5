import { fork, type ChildProcess } from 'node:child_process';
import { benchScript, SCRIPT_EXEC_ARGV } from './bench-paths';
import type { ParentMessage, WorkerMessage } from './worker.messages';

/** The parent's way of running scripts, and `global.gc` for `memory()`. */
const EXEC_ARGV = [...SCRIPT_EXEC_ARGV, '--expose-gc'];

export interface ForkedWorkerOptions {
  schema: string;
  prefix: string;
  concurrency: number;
  /** Steps of the deployment's chain workflow. */
  steps: number;
  /** Called with the id of every workflow this worker finishes. */
  onFinished: (workflowId: string) => void;
}

/**
 * A worker process (worker.main.ts) joining a deployment's schema and queue prefix: what a second
 * pod of the same app is. Its stdout and stderr go to the parent's stderr, so a benchmark's
 * stdout stays its JSON lines.
 */
export class ForkedWorker {
  private memoryWaiters: Array<(footprint: { rss: number; heapUsed: number }) => void> = [];

  private constructor(private readonly child: ChildProcess) {}

  /** Forks the worker; resolves once its app has booted and its worker runs. */
  static start(options: ForkedWorkerOptions): Promise<ForkedWorker> {
    const child = fork(benchScript('support/worker.main.ts'), [], {
      execArgv: EXEC_ARGV,
      env: {
        ...process.env,
        BENCH_SCHEMA: options.schema,
        BENCH_PREFIX: options.prefix,
        BENCH_CONCURRENCY: String(options.concurrency),
        BENCH_STEPS: String(options.steps),
      },
      stdio: ['ignore', 2, 2, 'ipc'],
    });
    const worker = new ForkedWorker(child);
    return new Promise((resolve, reject) => {
      const onExit = (code: number | null) =>
        reject(new Error(`The worker process exited (${code}) before it was ready.`));
      child.once('exit', onExit);
      child.on('message', (message: WorkerMessage) => {
        if (message.type === 'ready') {
          child.off('exit', onExit);
          resolve(worker);
        } else if (message.type === 'finished') options.onFinished(message.id);
        else worker.memoryWaiters.shift()?.({ rss: message.rss, heapUsed: message.heapUsed });
      });
    });
  }

  /** The worker's resident set size and used heap, in bytes, after a full GC. */
  memory(): Promise<{ rss: number; heapUsed: number }> {
    return new Promise((resolve) => {
      this.memoryWaiters.push(resolve);
      this.send({ type: 'memory' });
    });
  }

  /** Closes the worker's app (in-flight steps finish) and waits for the process to exit. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.send({ type: 'stop' });
    await exited;
  }

  private send(message: ParentMessage): void {
    this.child.send(message);
  }
}
