import { GenevaDriveError } from './geneva-drive.error';

/** Another ongoing workflow of the same type already exists for this hero. */
export class WorkflowAlreadyOngoingError extends GenevaDriveError {
  override readonly name: string = 'WorkflowAlreadyOngoingError';
}
