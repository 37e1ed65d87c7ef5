import { Injectable } from '@nestjs/common';
import type { SignalEntity } from '../entities/signal.entity';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';

/** The rows a committed signal delivery left behind for one execution it woke. */
export interface WakeSnapshot {
  workflow: WorkflowEntity;
  execution: StepExecutionEntity;
  signal: SignalEntity;
}

/** Enough for a burst of wakes; a snapshot nobody takes is dropped, never waited for. */
const MAX_SNAPSHOTS = 1000;
/** A woken job later than this (a stalled worker, a delay) reads its rows first anyway. */
const MAX_AGE_MS = 30_000;

/**
 * What `signal()` knows of the executions it woke, kept for this process's worker: when the woken
 * job runs here, its prepare need not wait for the read of its rows (see
 * `WorkflowRepository.lockForStepAsLeft`: the fence checks they are still as the wake left them).
 * A process without a worker keeps nothing; a job run elsewhere finds nothing and reads first.
 */
@Injectable()
export class WakeSnapshots {
  private readonly snapshots = new Map<string, WakeSnapshot & { at: number }>();

  constructor(@InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions) {}

  /** Keeps the rows as the committed delivery left them, by execution id. */
  remember(snapshot: WakeSnapshot): void {
    if (!this.options.worker) return;
    const now = Date.now();
    for (const [id, kept] of this.snapshots) {
      if (this.snapshots.size < MAX_SNAPSHOTS && now - kept.at <= MAX_AGE_MS) break;
      this.snapshots.delete(id);
    }
    // The signal is the caller's return value too: kept as it was committed, whatever they do to it.
    const signal = Object.assign(
      Object.create(Object.getPrototypeOf(snapshot.signal) as object) as SignalEntity,
      snapshot.signal,
    );
    this.snapshots.set(snapshot.execution.id, { ...snapshot, signal, at: now });
  }

  /** The snapshot of the execution, handed out once; null when none is fresh. */
  take(executionId: string): WakeSnapshot | null {
    const kept = this.snapshots.get(executionId);
    if (!kept) return null;
    this.snapshots.delete(executionId);
    return Date.now() - kept.at <= MAX_AGE_MS ? kept : null;
  }
}
