import type { Provider } from '@nestjs/common';
import {
  INSTALLED_VERSION_READER,
  readInstalledVersion,
} from './compatibility/installed-version.reader';
import { PeerVersionCheck } from './compatibility/peer-version.check';
import { ReadinessWatcher } from './discovery/readiness.watcher';
import { WorkflowExplorer } from './discovery/workflow.explorer';
import { WorkflowMetadataAccessor } from './discovery/workflow-metadata.accessor';
import { WorkflowRegistry } from './discovery/workflow.registry';
import { CompletedWorkflowCleaner } from './housekeeping/completed-workflow.cleaner';
import { HousekeepingLock } from './adapters/typeorm/housekeeping.lock';
import { GenevaDriveHealthProbe } from './health/geneva-drive-health.probe';
import { HousekeepingService } from './housekeeping/housekeeping.service';
import { ScheduledJobReconciler } from './housekeeping/scheduled-job.reconciler';
import { StuckExecutionRecoverer } from './housekeeping/stuck-execution.recoverer';
import { OverdueWaitSweeper } from './housekeeping/overdue-wait.sweeper';
import { WorkflowGauges } from './housekeeping/workflow-gauges';
import { ErrorReportingService } from './observability/error-reporting.service';
import { GenevaDriveDataSource } from './adapters/typeorm/geneva-drive-data-source';
import { PostgresClientErrorGuard } from './adapters/typeorm/postgres-client-error.guard';
import { WorkflowRows } from './adapters/typeorm/workflow-rows';
import { JobDispatcher } from './queue/job-dispatcher';
import { TransportOutage } from './queue/transport-outage';
import { HeroResolver } from './adapters/typeorm/hero-resolver';
import { ExecutionColumns } from './adapters/typeorm/execution-columns';
import { HousekeepingQueries } from './adapters/typeorm/housekeeping-queries';
import { TypeOrmWorkflowRepository } from './adapters/typeorm/typeorm-workflow.repository';
import { WorkflowRepository } from './ports/workflow.repository';
import { StepJobQueue } from './queue/step-job.queue';
import { StepFinalizer } from './runner/step-finalizer';
import { WaitTimeoutExpirer } from './runner/wait-timeout.expirer';
import { StepInvoker } from './runner/step-invoker';
import { CursorCheckpointWriter } from './adapters/typeorm/cursor-checkpoint.writer';
import { StepPreparer } from './runner/step-preparer';
import { WorkflowRunner } from './runner/workflow.runner';
import { WorkflowScheduler } from './scheduling/workflow-scheduler';
import { OperatorVerbs } from './service/operator-verbs';
import { WorkflowService } from './service/workflow.service';
import { ShutdownSignal } from './resumable/shutdown.signal';
import { SignalRendezvous } from './signals/signal-rendezvous';
import { SignalSender } from './signals/signal-sender';
import { WakeSnapshots } from './signals/wake-snapshots';
import { SignalRows } from './adapters/typeorm/signal-rows';
import { StepHistograms } from './observability/step-histograms';
import { clsContextBridgeProvider } from './tracing/cls-context.provider';
import { workflowTracerProvider } from './tracing/workflow-tracer.provider';

/** The engine: discovery, the runner, signals, the service and housekeeping (ports only). */
export const GENEVA_DRIVE_ENGINE_PROVIDERS: Provider[] = [
  WorkflowMetadataAccessor,
  WorkflowRegistry,
  ReadinessWatcher,
  WorkflowExplorer,
  ErrorReportingService,
  StepHistograms,
  workflowTracerProvider,
  clsContextBridgeProvider,
  WorkflowScheduler,
  SignalRendezvous,
  SignalSender,
  WakeSnapshots,
  StepPreparer,
  ShutdownSignal,
  StepInvoker,
  StepFinalizer,
  WaitTimeoutExpirer,
  WorkflowRunner,
  OperatorVerbs,
  WorkflowService,
  CompletedWorkflowCleaner,
  StuckExecutionRecoverer,
  OverdueWaitSweeper,
  ScheduledJobReconciler,
  WorkflowGauges,
  HousekeepingService,
  GenevaDriveHealthProbe,
];

/** The TypeORM adapter behind the `WorkflowRepository` port (PostgreSQL's hot path inside it). */
export const GENEVA_DRIVE_TYPEORM_PROVIDERS: Provider[] = [
  JobDispatcher,
  TransportOutage,
  GenevaDriveDataSource,
  PostgresClientErrorGuard,
  WorkflowRows,
  SignalRows,
  ExecutionColumns,
  CursorCheckpointWriter,
  HeroResolver,
  HousekeepingQueries,
  HousekeepingLock,
  TypeOrmWorkflowRepository,
  { provide: WorkflowRepository, useExisting: TypeOrmWorkflowRepository },
];

/** The boot check of the peer packages' versions (first, so it reports before anything fails). */
export const GENEVA_DRIVE_COMPATIBILITY_PROVIDERS: Provider[] = [
  { provide: INSTALLED_VERSION_READER, useValue: readInstalledVersion },
  PeerVersionCheck,
];

/** Providers shared by `GenevaDriveModule` and `GenevaDriveTestingModule` (the queue differs). */
export const GENEVA_DRIVE_CORE_PROVIDERS: Provider[] = [
  ...GENEVA_DRIVE_COMPATIBILITY_PROVIDERS,
  ...GENEVA_DRIVE_ENGINE_PROVIDERS,
  ...GENEVA_DRIVE_TYPEORM_PROVIDERS,
];

/**
 * What the library modules export to the app (the health probe for the `/terminus` subpath's
 * indicator, the repository port and the step-job queue for the `/dashboard` subpath's reads;
 * none is a public name of the main entry).
 */
export const GENEVA_DRIVE_EXPORTS = [
  WorkflowService,
  WorkflowRunner,
  HousekeepingService,
  GenevaDriveHealthProbe,
  WorkflowRepository,
  StepJobQueue,
];
