export { GenevaDriveTestingModule } from './geneva-drive-testing.module';
export { WorkflowTestHelper } from './workflow-test.helper';
export type { GenevaDriveTestingModuleOptions } from './testing-module-options.interface';
export type { EnqueuedJob } from './enqueued-job.interface';
