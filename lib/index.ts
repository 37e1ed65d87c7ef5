export { GenevaDriveModule } from './geneva-drive.module';
export * from './decorators';
export * from './entities';
export * from './migrations';
export * from './errors';
export * from './interfaces';
export { ExceptionPolicy } from './api/exception-policy';
export { SignalMatcher } from './api/signal-matcher';
export { WorkflowRunner } from './runner/workflow.runner';
export { WorkflowService } from './service/workflow.service';
export {
  HousekeepingService,
  HOUSEKEEPING_CRON_JOB_NAME,
} from './housekeeping/housekeeping.service';
export type { HousekeepingReport } from './housekeeping/housekeeping-report.interface';
export {
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS,
  type GenevaDriveDiagnosticsEvent,
  type PreconditionDiagnosticsOutcome,
  type StepDiagnosticsOutcome,
} from './observability/diagnostics';
export { GenevaDriveExceptionFilter } from './http';
