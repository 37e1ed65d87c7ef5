import { GenevaDriveError } from './geneva-drive.error';

/** A workflow id matches no row. */
export class WorkflowNotFoundError extends GenevaDriveError {
  override readonly name: string = 'WorkflowNotFoundError';
}
