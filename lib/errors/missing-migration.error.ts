import { StepConfigurationError } from './step-configuration.error';

/** A feature needs columns that a migration of GENEVA_DRIVE_MIGRATIONS adds, and that migration has not run. */
export class MissingMigrationError extends StepConfigurationError {
  override readonly name: string = 'MissingMigrationError';
}
