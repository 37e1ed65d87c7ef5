import { Inject } from '@nestjs/common';

/** DI token of the validated, defaulted module options (`ResolvedGenevaDriveOptions`). */
export const GENEVA_DRIVE_RESOLVED_OPTIONS = Symbol('GENEVA_DRIVE_RESOLVED_OPTIONS');

/** Injects `ResolvedGenevaDriveOptions`. */
export const InjectResolvedOptions = (): ParameterDecorator =>
  Inject(GENEVA_DRIVE_RESOLVED_OPTIONS);
