import { Injectable } from '@nestjs/common';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import type { PreparedStep } from '../runner/prepared-step.interface';

/** Histogram names of the `metrics` reporter (SPEC §16.6). */
export const STEP_HISTOGRAMS = {
  duration: 'geneva_drive.step.duration_ms',
  queueDelay: 'geneva_drive.step.queue_delay_ms',
  signalWake: 'geneva_drive.signal.wake_ms',
} as const;

/**
 * Records a finalized step attempt's latencies on `metrics.histogram()`, from the execution's
 * own timestamps: duration `started_at` → finalize committed, queue delay `scheduled_for` →
 * `started_at`, and for a step woken by a signal, wake latency signal `created_at` →
 * `started_at`. Nothing is computed without a reporter with `histogram()`.
 */
@Injectable()
export class StepHistograms {
  private readonly record:
    ((name: string, value: number, tags: Record<string, string>) => void) | null;

  constructor(@InjectResolvedOptions() options: ResolvedGenevaDriveOptions) {
    const { metrics } = options;
    this.record = metrics?.histogram ? metrics.histogram.bind(metrics) : null;
  }

  stepFinalized(prepared: PreparedStep, finalizedAt: number): void {
    if (!this.record) return;
    const { execution, receivedSignal, workflow } = prepared;
    const startedAt = execution.startedAt?.getTime();
    if (startedAt === undefined) return;
    const tags = { workflow_class: workflow.type, step_name: execution.stepName };
    this.record(STEP_HISTOGRAMS.duration, Math.max(0, finalizedAt - startedAt), tags);
    this.record(
      STEP_HISTOGRAMS.queueDelay,
      Math.max(0, startedAt - execution.scheduledFor.getTime()),
      tags,
    );
    if (receivedSignal) {
      this.record(
        STEP_HISTOGRAMS.signalWake,
        Math.max(0, startedAt - receivedSignal.createdAt.getTime()),
        { ...tags, signal_name: receivedSignal.name },
      );
    }
  }
}
