import { GenevaDriveError } from '../errors/geneva-drive.error';

/** A `geneva-drive` command line that cannot be run as given (exit code 2). */
export class CliUsageError extends GenevaDriveError {
  override readonly name: string = 'CliUsageError';
}
