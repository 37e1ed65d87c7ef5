import { GenevaDriveError } from './geneva-drive.error';

/** A signal payload serializes to more bytes than maxSignalPayloadSize allows. */
export class SignalPayloadTooLargeError extends GenevaDriveError {
  override readonly name: string = 'SignalPayloadTooLargeError';
}
