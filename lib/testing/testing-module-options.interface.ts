import type { GenevaDriveModuleOptions } from '../interfaces/module-options.interface';

/**
 * Options of `GenevaDriveTestingModule.forRoot()`: the root module's options minus the Redis and
 * worker ones (`connection`, `prefix`, `queues`, `worker`), plus `autoRun`. Validated like the
 * root options (unknown keys rejected). `enqueueAfterCommit` defaults to `false` here, and
 * housekeeping timers are never started.
 */
export type GenevaDriveTestingModuleOptions = Omit<
  GenevaDriveModuleOptions,
  'connection' | 'prefix' | 'queues' | 'worker'
> & {
  /**
   * Run due jobs in the background like a worker would, honoring their delays (for
   * controller-level e2e tests). Default `false`: jobs are only recorded and the
   * `WorkflowTestHelper` methods (or `WorkflowRunner.performStep`) run steps.
   */
  autoRun?: boolean;
};

/** The testing module's own settings, once validated. */
export interface ResolvedTestingOptions {
  autoRun: boolean;
}
