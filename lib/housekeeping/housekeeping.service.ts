import {
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type LoggerService,
  type OnApplicationBootstrap,
  type OnModuleInit,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { ReadinessWatcher } from '../discovery/readiness.watcher';
import { ModuleOptionsError } from '../errors/module-options.error';
import type { HousekeepingResult } from '../interfaces/workflow-service.interface';
import { ErrorReportingService } from '../observability/error-reporting.service';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { WorkflowRepository } from '../ports/workflow.repository';
import { asError } from '../scheduling/execution-transitions';
import { CompletedWorkflowCleaner } from './completed-workflow.cleaner';
import type { HousekeepingReport } from './housekeeping-report.interface';
import { ScheduledJobReconciler, type ReconciliationResult } from './scheduled-job.reconciler';
import { OverdueWaitSweeper } from './overdue-wait.sweeper';
import { StuckExecutionRecoverer } from './stuck-execution.recoverer';
import { WorkflowGauges } from './workflow-gauges';

/**
 * Gauge of each housekeeping run: how many `scheduled` executions reconciliation re-enqueued
 * because their job was lost (normally 0; anything else means jobs went missing from Redis).
 */
export const RECONCILED_GAUGE = 'geneva_drive.reenqueued_lost_jobs';

/**
 * Gauge of each housekeeping run: how many signal-wait timeouts the sweep fired because their
 * timer job had not (normally 0, as the delayed jobs fire them; anything else means jobs were lost).
 */
export const WAIT_TIMEOUTS_FIRED_GAUGE = 'geneva_drive.waiting_timeouts_fired';

/** The name of the library's cron job in `SchedulerRegistry`. */
export const HOUSEKEEPING_CRON_JOB_NAME = 'geneva-drive:housekeeping';

/**
 * Housekeeping (the gem's `HousekeepingJob`): deletes finished and canceled workflows older than
 * `deleteCompletedWorkflowsAfter`, recovers executions stuck `in_progress`, re-enqueues
 * `scheduled` executions whose BullMQ job is gone (`reconcileScheduledJobs`), recovers executions
 * stuck `scheduled`, fires signal-wait timeouts whose timer job was lost, deletes pending signals
 * older than `signalRetention`, and reports the gauges to the `metrics` option.
 *
 * Scheduled from `housekeeping.cron` through the host app's `SchedulerRegistry` (import
 * `ScheduleModule.forRoot()` once in the app; the library never imports it), registered at
 * bootstrap and removed at shutdown. `run()` may also be called directly (a CLI task, a test;
 * it works with `housekeeping.enabled: false` and in `GenevaDriveTestingModule`). Every run first
 * takes a database-wide lock and does nothing when another process holds it, so a cluster does
 * one run per tick.
 */
@Injectable()
export class HousekeepingService
  implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown
{
  private readonly defaultLogger = new Logger('GenevaDrive');
  private job: CronJob | null = null;
  private readonly inFlight = new Set<Promise<unknown>>();
  private stopping = false;

  constructor(
    private readonly readiness: ReadinessWatcher,
    private readonly repository: WorkflowRepository,
    private readonly cleaner: CompletedWorkflowCleaner,
    private readonly recoverer: StuckExecutionRecoverer,
    private readonly reconciler: ScheduledJobReconciler,
    private readonly overdueWaits: OverdueWaitSweeper,
    private readonly gauges: WorkflowGauges,
    private readonly errors: ErrorReportingService,
    @InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions,
    @Optional() private readonly schedulerRegistry?: SchedulerRegistry,
  ) {}

  private get logger(): LoggerService {
    return this.options.logger ?? this.defaultLogger;
  }

  /** Validates the schedule at boot: a registry must exist and the cron expression must parse. */
  onModuleInit(): void {
    const { enabled, cron } = this.options.housekeeping;
    if (!enabled) return;
    if (!this.schedulerRegistry) {
      throw new ModuleOptionsError(
        'GenevaDriveModule: housekeeping is enabled but no SchedulerRegistry is available. ' +
          'Import ScheduleModule.forRoot() from @nestjs/schedule once in your root module, ' +
          'or set housekeeping: { enabled: false } and call HousekeepingService.run() yourself.',
      );
    }
    try {
      this.job = CronJob.from({ cronTime: cron, onTick: () => this.tick(), start: false });
    } catch (error) {
      throw new ModuleOptionsError(
        `GenevaDriveModule: housekeeping.cron '${cron}' is not a valid cron expression (${asError(error).message}).`,
      );
    }
  }

  onApplicationBootstrap(): void {
    if (!this.job || !this.schedulerRegistry) return;
    this.schedulerRegistry.addCronJob(HOUSEKEEPING_CRON_JOB_NAME, this.job);
    this.job.start();
  }

  /** Removes the cron job and waits for a running pass (before TypeORM closes the DataSource). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.job) {
      if (this.schedulerRegistry?.doesExist('cron', HOUSEKEEPING_CRON_JOB_NAME)) {
        this.schedulerRegistry.deleteCronJob(HOUSEKEEPING_CRON_JOB_NAME);
      }
      void this.job.stop();
      this.job = null;
    }
    await Promise.allSettled([...this.inFlight]);
  }

  /**
   * One housekeeping pass: cleanup, stuck-`in_progress` recovery, stuck-`scheduled` recovery,
   * then the gauges. Resolves all zeros when another process holds the housekeeping lock. An
   * error in one part is reported (`errorReporter`) and the next part still runs; a failing row
   * is reported and skipped. A run stops after the batch in hand once `maxRunDuration` passed.
   */
  run(): Promise<HousekeepingResult> {
    return this.runReport().then((report) => report.result);
  }

  /**
   * `run()`, resolving the whole report: the result plus the lost jobs re-enqueued, the wait
   * timeouts fired and whether the lock was held elsewhere (the CLI's `housekeeping` prints it).
   */
  runReport(): Promise<HousekeepingReport> {
    return this.track(this.pass());
  }

  /** Shutdown waits for `work`. */
  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const forget = () => this.inFlight.delete(work);
    work.then(forget, forget);
    return work;
  }

  /**
   * Re-enqueues now every `scheduled` execution of a ready or performing workflow whose job the
   * queue no longer holds (after a Redis failover or flush, say), without waiting for the next
   * housekeeping run. Needs no housekeeping lock: each row is re-checked under its own locks.
   * Resolves the number of executions re-enqueued; does nothing (0) with the testing module's
   * in-process queue, which never loses a job.
   */
  reconcileScheduledJobs(): Promise<number> {
    return this.track(
      this.readiness.ready
        .then(() => this.reconciler.reconcile({ shouldStop: () => this.stopping }))
        .then(({ reenqueued }) => reenqueued),
    );
  }

  private tick(): void {
    this.run().catch((error: unknown) => {
      void this.errors.report(asError(error), noContext());
    });
  }

  private async pass(): Promise<HousekeepingReport> {
    await this.readiness.ready;
    const result: HousekeepingResult = {
      workflowsCleanedUp: 0,
      stepExecutionsCleanedUp: 0,
      signalsCleanedUp: 0,
      stuckInProgressRecovered: 0,
      stuckScheduledRecovered: 0,
      signalsExpired: 0,
    };
    const reconciliation: { result: ReconciliationResult | null } = { result: null };
    const timeouts = { fired: 0 };
    const ran = await this.repository.tryWithHousekeepingLock(async () => {
      const startedAt = Date.now();
      const settings = this.options.housekeeping;
      const ago = (ms: number) => new Date(startedAt - ms);
      // Bounded at any table size: each part stops after its current batch once its time is up;
      // cleanup gets the first half, so recovery runs even behind a huge cleanup backlog.
      const bound = { hit: false };
      const until = (at: number) => () => {
        const timeUp = Date.now() >= at;
        if (timeUp) bound.hit = true;
        return this.stopping || timeUp;
      };
      const cleanupShouldStop = until(startedAt + settings.maxRunDurationMs / 2);
      const shouldStop = until(startedAt + settings.maxRunDurationMs);
      // A migration may have run since boot.
      const { features } = this.repository;
      if (!features.signals || !features.resumable || !features.waitTimeouts) {
        await this.repository.refreshSchemaFeatures();
      }

      if (settings.deleteCompletedWorkflowsAfterMs === null) {
        this.logger.log('[Housekeeping] Cleanup skipped: deleteCompletedWorkflowsAfter is null');
      } else {
        const cutoff = ago(settings.deleteCompletedWorkflowsAfterMs);
        await this.guard('cleanup', async () => {
          const counts = await this.cleaner.clean(cutoff, settings.batchSize, cleanupShouldStop);
          result.workflowsCleanedUp = counts.workflows;
          result.stepExecutionsCleanedUp = counts.stepExecutions;
          result.signalsCleanedUp = counts.signals;
        });
      }
      const inProgressCutoff = ago(settings.stuckInProgressThresholdMs);
      const scheduledCutoff = ago(settings.stuckScheduledThresholdMs);
      await this.guard('stuck in_progress recovery', async () => {
        result.stuckInProgressRecovered = await this.recoverer.recover(
          'in_progress',
          inProgressCutoff,
          settings.batchSize,
          shouldStop,
        );
      });
      // One pass over the jobs: reconciliation looks up the job of every settled `scheduled` row
      // (overdue ones first) and re-enqueues the lost ones; stuck-scheduled recovery then leaves
      // those rows alone and asks the queue only about the rows reconciliation did not reach.
      if (settings.reconcileScheduledJobs && this.reconciler.supported) {
        await this.guard('scheduled job reconciliation', async () => {
          reconciliation.result = await this.reconciler.reconcile({
            batchSize: settings.batchSize,
            shouldStop,
          });
        });
      }
      await this.guard('stuck scheduled recovery', async () => {
        result.stuckScheduledRecovered = await this.recoverer.recover(
          'scheduled',
          scheduledCutoff,
          settings.batchSize,
          shouldStop,
          reconciliation.result,
        );
      });

      await this.guard('overdue wait timeouts', async () => {
        timeouts.fired = await this.overdueWaits.sweep(new Date(), settings.batchSize, shouldStop);
      });
      const { signalRetentionMs } = this.options;
      if (signalRetentionMs !== null && this.repository.features.signals) {
        await this.guard('signal retention', async () => {
          result.signalsExpired = await this.expirePendingSignals(
            ago(signalRetentionMs),
            settings.batchSize,
            shouldStop,
          );
        });
      }
      const { metrics, waitingVisibilityThresholdMs } = this.options;
      if (metrics) {
        await this.guard('gauges', async () => {
          const overdueCutoff =
            waitingVisibilityThresholdMs === null ? null : ago(waitingVisibilityThresholdMs);
          for (const { name, value, tags } of await this.gauges.read(overdueCutoff)) {
            if (tags) metrics.gauge(name, value, tags);
            else metrics.gauge(name, value);
          }
          const { result: reconciled } = reconciliation;
          if (reconciled) metrics.gauge(RECONCILED_GAUGE, reconciled.reenqueued);
          if (this.repository.features.waitTimeouts)
            metrics.gauge(WAIT_TIMEOUTS_FIRED_GAUGE, timeouts.fired);
        });
      }
      if (bound.hit) {
        this.logger.warn(
          `[Housekeeping] Stopped at maxRunDuration (${settings.maxRunDurationMs} ms) with work left; the next run goes on`,
        );
      }
      this.logger.log(
        `[Housekeeping] Completed: ${JSON.stringify({ ...result, lostJobsReenqueued: reconciliation.result?.reenqueued ?? 0, waitTimeoutsFired: timeouts.fired })}`,
      );
      return true;
    });
    if (ran === null) {
      this.logger.log('[Housekeeping] Skipped: another process holds the housekeeping lock');
    }
    return {
      result,
      lostJobsReenqueued: reconciliation.result?.reenqueued ?? 0,
      waitTimeoutsFired: timeouts.fired,
      skipped: ran === null,
    };
  }

  /** Deletes pending signals created before `cutoff`, a batch per transaction; resolves how many. */
  private async expirePendingSignals(
    cutoff: Date,
    batchSize: number,
    shouldStop: () => boolean,
  ): Promise<number> {
    let deleted = 0;
    while (!shouldStop()) {
      const batch = await this.repository.deletePendingSignals(cutoff, batchSize);
      deleted += batch;
      if (batch < batchSize) break;
    }
    return deleted;
  }

  /** Runs one part of a pass; its error is reported and the pass goes on. */
  private async guard(part: string, work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (thrown) {
      const error = asError(thrown);
      this.logger.error(`[Housekeeping] ${part} failed: ${error.message}`, error.stack);
      await this.errors.report(error, noContext());
    }
  }
}

/** The error-report context of a failure that concerns no single workflow. */
function noContext() {
  return {
    workflowId: '',
    workflowClass: '',
    stepExecutionId: null,
    stepName: null,
    heroType: null,
    heroId: null,
  };
}
