import { GenevaDriveError } from './geneva-drive.error';

/** An operation is not allowed from the workflow's current state. */
export class InvalidStateError extends GenevaDriveError {
  override readonly name: string = 'InvalidStateError';
}
