import { GenevaDriveError } from './geneva-drive.error';

/** A workflow, step, policy or job option is configured wrongly. Raised at boot for decorator options. */
export class StepConfigurationError extends GenevaDriveError {
  override readonly name: string = 'StepConfigurationError';
}
