import diagnosticsChannel from 'node:diagnostics_channel';
import { performance } from 'node:perf_hooks';
import { GENEVA_DRIVE_DIAGNOSTICS_CHANNELS, type GenevaDriveDiagnosticsEvent } from '../../lib';

/**
 * Tells when a set of workflows (or job chains) has finished, from finish reports: the engine's
 * `geneva-drive:finalize` events in this process (`watchEngine()`), IPC messages from worker
 * processes, or a raw BullMQ worker's completions. No polling.
 */
export class FinishLine {
  private readonly done = new Set<string>();
  private readonly waiters = new Set<{ pending: Set<string>; resolve: (at: number) => void }>();
  private lastProgressAt = 0;

  /** Reports a finished workflow (or chain). */
  finished(id: string): void {
    this.done.add(id);
    this.lastProgressAt = performance.now();
    for (const waiter of this.waiters) {
      if (waiter.pending.delete(id) && waiter.pending.size === 0)
        waiter.resolve(this.lastProgressAt);
    }
  }

  /**
   * Resolves the `performance.now()` at which the last of `ids` finished. Rejects when no
   * workflow finished for `stallMs` (a step failed and paused its workflow, or a worker died).
   */
  expect(ids: Iterable<string>, stallMs = 60_000): Promise<number> {
    const pending = new Set([...ids].filter((id) => !this.done.has(id)));
    this.lastProgressAt = performance.now();
    if (pending.size === 0) return Promise.resolve(this.lastProgressAt);
    return new Promise<number>((resolve, reject) => {
      const waiter = {
        pending,
        resolve: (at: number) => {
          clearInterval(watchdog);
          this.waiters.delete(waiter);
          resolve(at);
        },
      };
      const watchdog = setInterval(() => {
        if (performance.now() - this.lastProgressAt < stallMs) return;
        clearInterval(watchdog);
        this.waiters.delete(waiter);
        reject(new Error(`${pending.size} workflow(s) made no progress for ${stallMs} ms.`));
      }, 1_000);
      this.waiters.add(waiter);
    });
  }

  /** Feeds the line from this process's engine; returns the unsubscribe function. */
  watchEngine(): () => void {
    return onWorkflowFinished((id) => this.finished(id));
  }
}

/**
 * Calls `listener` with the id of every workflow this process's engine finishes (the
 * `geneva-drive:finalize` event that reports it finished); returns the unsubscribe function.
 */
export function onWorkflowFinished(listener: (workflowId: string) => void): () => void {
  const onFinalize = (message: unknown) => {
    const event = message as GenevaDriveDiagnosticsEvent;
    if (event.workflowState === 'finished') listener(event.workflowId);
  };
  diagnosticsChannel.subscribe(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.finalize, onFinalize);
  return () =>
    diagnosticsChannel.unsubscribe(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.finalize, onFinalize);
}
