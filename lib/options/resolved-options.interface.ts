import type { LoggerService } from '@nestjs/common';
import type {
  ErrorReporter,
  GaugeReporter,
  GenevaDriveConnectionOptions,
  GenevaDriveQueueOptions,
  GenevaDriveRedisClient,
  GenevaDriveTransport,
} from '../interfaces/module-options.interface';
import type { StepChainLimits } from '../runner/step-chain';

/** Module options with every default applied and every duration in milliseconds. */
export interface ResolvedGenevaDriveOptions {
  connection: GenevaDriveConnectionOptions | GenevaDriveRedisClient;
  prefix: string;
  dataSource: string | undefined;
  queues: Record<string, Required<GenevaDriveQueueOptions>>;
  defaultQueue: string;
  transport: GenevaDriveTransport;
  worker: boolean;
  enqueueAfterCommit: boolean;
  housekeeping: {
    enabled: boolean;
    cron: string;
    deleteCompletedWorkflowsAfterMs: number | null;
    stuckInProgressThresholdMs: number;
    stuckScheduledThresholdMs: number;
    stuckRecoveryAction: 'reattempt' | 'cancel';
    batchSize: number;
    maxRunDurationMs: number;
    reconcileScheduledJobs: boolean;
  };
  stepChaining: StepChainLimits;
  preparedStatements: boolean;
  maxCursorSize: number | null;
  maxSignalPayloadSize: number | null;
  waitingVisibilityThresholdMs: number | null;
  /** Pending signals older than this are deleted by housekeeping; null keeps them. */
  signalRetentionMs: number | null;
  errorReporter: ErrorReporter | null;
  metrics: GaugeReporter | null;
  logger: LoggerService | null;
  allowUnsupportedVersions: boolean;
  tracing: boolean;
  /** nestjs-cls keys captured at start() and restored around steps; empty: CLS unused. */
  clsKeys: string[];
}
