import { GenevaDriveError } from './geneva-drive.error';

/**
 * GenevaDriveModule options are invalid (the message names every offending key), or a peer
 * package's installed version is outside the supported range (the message names the package, its
 * version, the range and the install command).
 */
export class ModuleOptionsError extends GenevaDriveError {
  override readonly name: string = 'ModuleOptionsError';
}
