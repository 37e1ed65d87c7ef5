import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { GENEVA_DRIVE_CORE_PROVIDERS, GENEVA_DRIVE_EXPORTS } from '../geneva-drive.providers';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { GENEVA_DRIVE_RESOLVED_OPTIONS } from '../options/resolved-options.token';
import { StepJobQueue } from '../queue/step-job.queue';
import { InMemoryStepJobQueue } from './in-memory-step-job.queue';
import { ModuleExclusivityCheck } from './module-exclusivity.check';
import { resolveTestingOptions } from './resolve-testing-options';
import type {
  GenevaDriveTestingModuleOptions,
  ResolvedTestingOptions,
} from './testing-module-options.interface';
import { GENEVA_DRIVE_TESTING_OPTIONS } from './testing-options.token';
import { WorkflowTestHelper } from './workflow-test.helper';

/** Raw options as given to `forRoot()`, validated when the app boots. */
const RAW_TESTING_OPTIONS = Symbol('GENEVA_DRIVE_RAW_TESTING_OPTIONS');

/**
 * `GenevaDriveModule` for tests: the same engine (`WorkflowService`, `WorkflowRunner`, discovery,
 * validation) on the TypeORM data source the test configures, with BullMQ replaced by an
 * in-process queue (no Redis), jobs enqueued inline (`enqueueAfterCommit: false` by default) and
 * housekeeping timers off. Provides `WorkflowTestHelper`. Global.
 *
 * ```ts
 * Test.createTestingModule({
 *   imports: [TypeOrmModule.forRoot({ ...entities: [...GENEVA_DRIVE_ENTITIES] }), GenevaDriveTestingModule.forRoot()],
 *   providers: [SignupWorkflow],
 * })
 * ```
 */
@Module({})
export class GenevaDriveTestingModule {
  /**
   * Options are the root options minus `connection`, `prefix`, `queues` and `worker`, plus
   * `autoRun` (default false). Invalid options fail boot with `ModuleOptionsError`.
   */
  static forRoot(options: GenevaDriveTestingModuleOptions = {}): DynamicModule {
    const providers: Provider[] = [
      { provide: RAW_TESTING_OPTIONS, useValue: options },
      {
        provide: GENEVA_DRIVE_RESOLVED_OPTIONS,
        inject: [RAW_TESTING_OPTIONS],
        useFactory: (raw: GenevaDriveTestingModuleOptions): ResolvedGenevaDriveOptions =>
          resolveTestingOptions(raw).resolved,
      },
      {
        provide: GENEVA_DRIVE_TESTING_OPTIONS,
        inject: [RAW_TESTING_OPTIONS],
        useFactory: (raw: GenevaDriveTestingModuleOptions): ResolvedTestingOptions =>
          resolveTestingOptions(raw).testing,
      },
      ModuleExclusivityCheck,
      ...GENEVA_DRIVE_CORE_PROVIDERS,
      InMemoryStepJobQueue,
      { provide: StepJobQueue, useExisting: InMemoryStepJobQueue },
      WorkflowTestHelper,
    ];
    return {
      module: GenevaDriveTestingModule,
      global: true,
      imports: [DiscoveryModule],
      providers,
      exports: [...GENEVA_DRIVE_EXPORTS, WorkflowTestHelper, GENEVA_DRIVE_RESOLVED_OPTIONS],
    };
  }
}
