import { GenevaDriveError } from '../errors/geneva-drive.error';

/** The app's database or transport did not answer `geneva-drive` (exit code 3). */
export class CliConnectionError extends GenevaDriveError {
  override readonly name: string = 'CliConnectionError';
}
