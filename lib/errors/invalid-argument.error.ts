import { GenevaDriveError } from './geneva-drive.error';

/** A runtime argument of WorkflowService is invalid (blank signal name, unknown option key, unusable hero). */
export class InvalidArgumentError extends GenevaDriveError {
  override readonly name: string = 'InvalidArgumentError';
}
