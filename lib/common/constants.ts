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
/** The BullMQ job name of a signal wait's timeout (`StepJob.kind` `expireWait`). */
export const EXPIRE_WAIT_JOB_NAME = 'expire-wait';

/**
 * The versions of the peer packages this release supports, checked when the module initialises
 * (a version outside its range fails boot with `ModuleOptionsError`). Must equal package.json's
 * `peerDependencies` for these names: test/unit/supported-peer-versions.spec.ts holds them together.
 * Only packages the library loads at run time are listed; the optional drivers and
 * `@opentelemetry/api` are left to the packages that load them.
 */
export const SUPPORTED_PEER_VERSIONS: Readonly<Record<string, string>> = {
  '@nestjs/common': '^11 || ^12',
  '@nestjs/core': '^11 || ^12',
  '@nestjs/typeorm': '^11 || ^12',
  '@nestjs/bullmq': '^11 || ^12',
  '@nestjs/schedule': '^6 || ^12',
  typeorm: '^0.3.20 || ^1',
  bullmq: '^5 || ^6',
  'class-validator': '^0.14.0 || ^0.15.0',
  'class-transformer': '^0.5.1',
};

/**
 * Provided by `GenevaDriveModule` only: lets `GenevaDriveTestingModule` notice at boot that the
 * real module was imported beside it.
 */
export const GENEVA_DRIVE_REAL_MODULE_MARKER = Symbol('GENEVA_DRIVE_REAL_MODULE_MARKER');
