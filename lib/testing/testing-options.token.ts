import { Inject } from '@nestjs/common';

/** DI token of the testing module's own settings (`ResolvedTestingOptions`). */
export const GENEVA_DRIVE_TESTING_OPTIONS = Symbol('GENEVA_DRIVE_TESTING_OPTIONS');

/** Injects `ResolvedTestingOptions`. */
export const InjectTestingOptions = (): ParameterDecorator => Inject(GENEVA_DRIVE_TESTING_OPTIONS);
