/** Metadata keys written by the decorators and read only by `WorkflowMetadataAccessor`. */
export const WORKFLOW_METADATA = 'geneva-drive:workflow';
export const STEPS_METADATA = 'geneva-drive:steps';
export const CANCEL_IF_METADATA = 'geneva-drive:cancel-if';

/** The `@nestjs/bullmq` config key the library registers its own connection under. */
export const GENEVA_DRIVE_BULL_CONFIG_KEY = 'geneva-drive';

/** Default BullMQ queue name and key prefix. */
export const DEFAULT_QUEUE_NAME = 'geneva-drive';
export const DEFAULT_PREFIX = 'geneva-drive';

/** BullMQ job name of a step job. */
export const PERFORM_STEP_JOB_NAME = 'perform-step';
