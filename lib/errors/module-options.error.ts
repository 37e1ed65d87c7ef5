import { GenevaDriveError } from './geneva-drive.error';

/** GenevaDriveModule options are invalid; the message names every offending key. */
export class ModuleOptionsError extends GenevaDriveError {
  override readonly name: string = 'ModuleOptionsError';
}
