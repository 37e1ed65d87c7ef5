import { GenevaDriveError } from './geneva-drive.error';

/** The workflow is finished or canceled. */
export class WorkflowNotOngoingError extends GenevaDriveError {
  override readonly name: string = 'WorkflowNotOngoingError';
}
