/**
 * Type-level proof that `lib/index.ts` and its subpaths (testing, terminus, dashboard) satisfy the public contract
 * (`contract.d.ts`, a copy of shared/contract.d.ts under another module name). Compiled by
 * `npm run typecheck` and by ts-jest through `contract.spec.ts`: a mismatch fails the build.
 * Shapes only: behavior is covered by the e2e suite.
 */
import type * as Contract from 'nestjs-geneva-drive-contract';
import type * as ContractTesting from 'nestjs-geneva-drive-contract/testing';
import type * as ContractTerminus from 'nestjs-geneva-drive-contract/terminus';
import type * as ContractDashboard from 'nestjs-geneva-drive-contract/dashboard';
import * as Impl from '../../lib';
import * as ImplTesting from '../../lib/testing';
import type * as ImplTerminus from '../../lib/terminus';
import * as ImplDashboard from '../../lib/dashboard';

type Assert<T extends true> = T;
/** A is assignable to B. */
type Fits<A, B> = [A] extends [B] ? true : false;
/** Both directions. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Async options without the members that produce module options (the implementation's are wider). */
type AsyncExtras<T> = Omit<T, 'useFactory' | 'useClass' | 'useExisting'>;

export type TypeChecks = [
  Assert<Same<Impl.Duration, Contract.Duration>>,
  Assert<Same<Impl.WorkflowState, Contract.WorkflowState>>,
  Assert<Same<Impl.StepExecutionState, Contract.StepExecutionState>>,
  Assert<Same<Impl.StepExecutionOutcome, Contract.StepExecutionOutcome>>,
  Assert<Same<Impl.SignalState, Contract.SignalState>>,
  Assert<Fits<Impl.WorkflowEntity, Contract.WorkflowEntity>>,
  Assert<Fits<Impl.StepExecutionEntity, Contract.StepExecutionEntity>>,
  Assert<Fits<Impl.SignalEntity, Contract.SignalEntity>>,
  Assert<Same<Impl.HousekeepingOptions, Contract.HousekeepingOptions>>,
  Assert<Same<Impl.ErrorReportContext, Contract.ErrorReportContext>>,
  Assert<Same<Impl.GaugeReporter, Contract.GaugeReporter>>,
  // `connection` is widened compatibly (it also takes an ioredis client): every contract value
  // fits; the rest of the options are the contract's exactly.
  Assert<Fits<Contract.GenevaDriveModuleOptions, Impl.GenevaDriveModuleOptions>>,
  Assert<
    Same<
      Omit<Impl.GenevaDriveModuleOptions, 'connection'>,
      Omit<Contract.GenevaDriveModuleOptions, 'connection'>
    >
  >,
  Assert<Same<Impl.GenevaDriveConnectionOptions, Contract.GenevaDriveConnectionOptions>>,
  Assert<
    Same<
      AsyncExtras<Impl.GenevaDriveModuleAsyncOptions>,
      AsyncExtras<Contract.GenevaDriveModuleAsyncOptions>
    >
  >,
  Assert<Fits<Contract.GenevaDriveModuleAsyncOptions, Impl.GenevaDriveModuleAsyncOptions>>,
  Assert<Same<Impl.StepJobOptions, Contract.StepJobOptions>>,
  Assert<Fits<Impl.StepContext<{ id: number }>, Contract.StepContext<{ id: number }>>>,
  Assert<Fits<Impl.WorkflowContext<{ id: number }>, Contract.WorkflowContext<{ id: number }>>>,
  Assert<Same<Impl.ReattemptOptions, Contract.ReattemptOptions>>,
  Assert<Same<Impl.ExceptionAction, Contract.ExceptionAction>>,
  Assert<Same<Impl.ReportMode, Contract.ReportMode>>,
  Assert<Fits<Contract.DeclarativeExceptionPolicyOptions, Impl.DeclarativeExceptionPolicyOptions>>,
  Assert<Fits<Contract.ImperativeExceptionPolicyOptions, Impl.ImperativeExceptionPolicyOptions>>,
  Assert<Fits<Impl.StepOptions, Contract.StepOptions>>,
  Assert<
    Fits<
      Omit<Contract.StepOptions, 'onException' | 'onTimeout'>,
      Omit<Impl.StepOptions, 'onException' | 'onTimeout'>
    >
  >,
  Assert<
    Fits<
      Exclude<Contract.StepOptions['onTimeout'], Contract.ExceptionPolicy>,
      Impl.StepOptions['onTimeout']
    >
  >,
  Assert<Fits<Impl.ResumableStepOptions, Contract.ResumableStepOptions>>,
  Assert<
    Fits<
      Omit<Contract.ResumableStepOptions, 'onException' | 'onTimeout'>,
      Omit<Impl.ResumableStepOptions, 'onException' | 'onTimeout'>
    >
  >,
  Assert<Fits<Impl.WorkflowOptions, Contract.WorkflowOptions>>,
  Assert<
    Fits<Omit<Contract.WorkflowOptions, 'onException'>, Omit<Impl.WorkflowOptions, 'onException'>>
  >,
  Assert<Same<Impl.WorkflowRef, Contract.WorkflowRef>>,
  Assert<Fits<Contract.StartOptions, Impl.StartOptions>>,
  Assert<Fits<Contract.ListFilter, Impl.ListFilter>>,
  Assert<Fits<Contract.SignalOptions, Impl.SignalOptions>>,
  Assert<Same<Impl.HousekeepingResult, Contract.HousekeepingResult>>,
  // The engine builds it from the wait (its constructor takes the fields); instances match.
  Assert<Fits<Impl.SignalWaitTimeoutError, Contract.SignalWaitTimeoutError>>,
  Assert<Fits<Impl.IterableStep<string>, Contract.IterableStep<string>>>,
  Assert<Fits<Impl.WorkflowService, Contract.WorkflowService>>,
  Assert<Fits<Impl.WorkflowRunner, Contract.WorkflowRunner>>,
  Assert<Fits<Impl.HousekeepingService, Contract.HousekeepingService>>,
  Assert<Fits<Impl.ExceptionPolicy, Contract.ExceptionPolicy>>,
  Assert<Fits<Impl.SignalMatcher<{ amount: number }>, Contract.SignalMatcher<{ amount: number }>>>,
  Assert<
    Fits<
      ImplTesting.GenevaDriveTestingModuleOptions,
      ContractTesting.GenevaDriveTestingModuleOptions
    >
  >,
  Assert<
    Fits<
      ContractTesting.GenevaDriveTestingModuleOptions,
      ImplTesting.GenevaDriveTestingModuleOptions
    >
  >,
  Assert<Same<ImplTesting.EnqueuedJob, ContractTesting.EnqueuedJob>>,
  Assert<Fits<ImplTesting.WorkflowTestHelper, ContractTesting.WorkflowTestHelper>>,
  Assert<Same<ImplTerminus.GenevaDriveHealthOptions, ContractTerminus.GenevaDriveHealthOptions>>,
  Assert<
    Fits<ImplTerminus.GenevaDriveHealthIndicator, ContractTerminus.GenevaDriveHealthIndicator>
  >,
  Assert<Same<ImplDashboard.DashboardAction, ContractDashboard.DashboardAction>>,
  Assert<
    Same<
      ImplDashboard.DashboardAuthorizationContext,
      ContractDashboard.DashboardAuthorizationContext
    >
  >,
  Assert<
    Same<ImplDashboard.GenevaDriveDashboardOptions, ContractDashboard.GenevaDriveDashboardOptions>
  >,
];

/** Values: the same call shapes as the contract's declarations. */
export const valueChecks = {
  module: Impl.GenevaDriveModule satisfies Pick<
    typeof Contract.GenevaDriveModule,
    'forRoot' | 'forRootAsync'
  >,
  testingModule: ImplTesting.GenevaDriveTestingModule satisfies Pick<
    typeof ContractTesting.GenevaDriveTestingModule,
    'forRoot'
  >,
  dashboardModule: ImplDashboard.GenevaDriveDashboardModule satisfies Pick<
    typeof ContractDashboard.GenevaDriveDashboardModule,
    'forRoot' | 'forRootAsync'
  >,
  entities: Impl.GENEVA_DRIVE_ENTITIES satisfies typeof Contract.GENEVA_DRIVE_ENTITIES,
  migrations: Impl.GENEVA_DRIVE_MIGRATIONS satisfies typeof Contract.GENEVA_DRIVE_MIGRATIONS,
  // Decorator option types are compared above (ExceptionPolicy is a class on each side).
  workflow: Impl.Workflow,
  step: Impl.Step,
  resumableStep: Impl.ResumableStep,
  cancelIf: Impl.CancelIf satisfies typeof Contract.CancelIf,
  removedStep: Impl.RemovedStep satisfies typeof Contract.RemovedStep,
  policy: Impl.ExceptionPolicy satisfies typeof Contract.ExceptionPolicy,
  matcher: Impl.SignalMatcher satisfies typeof Contract.SignalMatcher,
  exceptionFilter: Impl.GenevaDriveExceptionFilter satisfies new (
    ...args: never[]
  ) => Contract.GenevaDriveExceptionFilter,
  errors: {
    base: Impl.GenevaDriveError satisfies typeof Contract.GenevaDriveError,
    config: Impl.StepConfigurationError satisfies typeof Contract.StepConfigurationError,
    migration: Impl.MissingMigrationError satisfies typeof Contract.MissingMigrationError,
    state: Impl.InvalidStateError satisfies typeof Contract.InvalidStateError,
    ongoing: Impl.WorkflowAlreadyOngoingError satisfies typeof Contract.WorkflowAlreadyOngoingError,
    notOngoing: Impl.WorkflowNotOngoingError satisfies typeof Contract.WorkflowNotOngoingError,
    payload: Impl.SignalPayloadTooLargeError satisfies typeof Contract.SignalPayloadTooLargeError,
    cursor: Impl.CursorTooLargeError satisfies typeof Contract.CursorTooLargeError,
    argument: Impl.InvalidArgumentError satisfies typeof Contract.InvalidArgumentError,
    options: Impl.ModuleOptionsError satisfies typeof Contract.ModuleOptionsError,
    notFound: Impl.WorkflowNotFoundError satisfies typeof Contract.WorkflowNotFoundError,
    notDefined: Impl.StepNotDefinedError satisfies typeof Contract.StepNotDefinedError,
  },
};
