import { GenevaDriveError } from './geneva-drive.error';

/** A resumable step cursor serializes to more bytes than maxCursorSize allows. */
export class CursorTooLargeError extends GenevaDriveError {
  override readonly name: string = 'CursorTooLargeError';
}
