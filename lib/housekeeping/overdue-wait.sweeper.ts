import { Injectable } from '@nestjs/common';
import { ErrorReportingService } from '../observability/error-reporting.service';
import { WorkflowRepository, type StuckPageStart } from '../ports/workflow.repository';
import { WaitTimeoutExpirer } from '../runner/wait-timeout.expirer';
import { asError } from '../scheduling/execution-transitions';

/**
 * The backstop of signal-wait timeouts (SPEC §16.3): fires the timeout of every parked execution
 * of a ready workflow whose `wait_deadline_at` has passed, for a timer job that was lost (a Redis
 * flush, a failover). Keyset pages of `batchSize`, oldest deadline first; each row is fired in
 * its own transaction under its locks (a row whose signal just came is left alone there), and a
 * row that fails is reported and skipped.
 */
@Injectable()
export class OverdueWaitSweeper {
  constructor(
    private readonly repository: WorkflowRepository,
    private readonly expirer: WaitTimeoutExpirer,
    private readonly errors: ErrorReportingService,
  ) {}

  /** Resolves how many timeouts fired. */
  async sweep(now: Date, batchSize: number, shouldStop: () => boolean): Promise<number> {
    if (!this.repository.features.waitTimeouts) return 0;
    let fired = 0;
    let after: StuckPageStart | null = null;
    while (!shouldStop()) {
      const page = await this.repository.overdueWaits(now, batchSize, after);
      for (const execution of page) {
        if (shouldStop()) break;
        after = { at: execution.waitDeadlineAt ?? now, id: execution.id };
        try {
          const expiry = await this.expirer.expire(execution.workflowId, execution.id);
          if (expiry.kind === 'fired') fired += 1;
        } catch (error) {
          await this.errors.report(asError(error), {
            workflowId: execution.workflowId,
            workflowClass: '',
            stepExecutionId: execution.id,
            stepName: null,
            heroType: null,
            heroId: null,
          });
        }
      }
      if (page.length < batchSize) break;
    }
    return fired;
  }
}
