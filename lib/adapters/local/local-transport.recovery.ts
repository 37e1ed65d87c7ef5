import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { ScheduledJobReconciler } from '../../housekeeping/scheduled-job.reconciler';
import { StuckExecutionRecoverer } from '../../housekeeping/stuck-execution.recoverer';
import { InjectResolvedOptions } from '../../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../../options/resolved-options.interface';
import { WorkflowRepository, type StuckPageStart } from '../../ports/workflow.repository';
import { waitTimeoutJobId } from '../../queue/job-id';
import { LocalStepJobQueue } from './local-step-job.queue';

/** Past every deadline the schema can hold (DATETIME ends in 9999): "all deadlines". */
const END_OF_TIME = new Date('9999-12-31T23:59:59.999Z');

/**
 * The `local` transport's boot: its queue starts empty, so the database is read back. Being the
 * only process (SPEC §16.5), it knows that every `in_progress` execution was cut off by the last
 * shutdown or crash, and recovers them at once (`stuckRecoveryAction`, as housekeeping would after
 * `stuckInProgressThreshold`); then every `scheduled` row is enqueued (reconciliation with no grace:
 * none of their jobs exists here) and every parked wait's timeout timer armed. Done before
 * `app.init()` resolves. The queue starts only then: a backlog read back page by page would
 * otherwise run in the order it is read, not in BullMQ's priority order.
 */
@Injectable()
export class LocalTransportRecovery implements OnApplicationBootstrap {
  private readonly logger = new Logger('GenevaDrive');

  constructor(
    private readonly queue: LocalStepJobQueue,
    private readonly repository: WorkflowRepository,
    private readonly recoverer: StuckExecutionRecoverer,
    private readonly reconciler: ScheduledJobReconciler,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { batchSize } = this.options.housekeeping;
    const interrupted = await this.recoverer.recover(
      'in_progress',
      new Date(),
      batchSize,
      () => false,
    );
    const { reenqueued } = await this.reconciler.reconcile({ graceMs: 0 });
    const timers = await this.armWaitTimeouts(batchSize);
    this.queue.start();
    (this.options.logger ?? this.logger).log(
      `Local transport: steps run in this process (no Redis). Read back from the database: ` +
        `${reenqueued} scheduled step(s), ${interrupted} interrupted step(s), ${timers} wait timeout(s).`,
    );
  }

  private async armWaitTimeouts(batchSize: number): Promise<number> {
    if (!this.repository.features.waitTimeouts) return 0;
    let armed = 0;
    let after: StuckPageStart | null = null;
    for (;;) {
      const page = await this.repository.overdueWaits(END_OF_TIME, batchSize, after);
      const now = new Date();
      for (const execution of page) {
        const deadline = execution.waitDeadlineAt ?? now;
        after = { at: deadline, id: execution.id };
        await this.queue.add({
          jobId: waitTimeoutJobId(execution.id, now),
          kind: 'expireWait',
          stepExecutionId: execution.id,
          workflowId: execution.workflowId,
          queue: this.options.defaultQueue,
          delay: Math.max(0, deadline.getTime() - now.getTime()),
        });
        armed += 1;
      }
      if (page.length < batchSize) return armed;
    }
  }
}
