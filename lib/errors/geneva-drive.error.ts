/** Common base of every error raised by nestjs-geneva-drive. */
export class GenevaDriveError extends Error {
  override readonly name: string = 'GenevaDriveError';

  constructor(message?: string, options?: ErrorOptions) {
    super(message, options);
    Object.setPrototypeOf(this, new.target.prototype);
  }
}
