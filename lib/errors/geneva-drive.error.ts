/**
 * The options of a library error's constructor: `cause` is the error that led to it. The same
 * shape as ES2022's `ErrorOptions`, spelled out so the published types also compile for apps
 * whose `lib` predates ES2022 (NestJS 11's application template targets ES2021).
 */
export interface GenevaDriveErrorOptions {
  cause?: unknown;
}

/** Common base of every error raised by nestjs-geneva-drive. */
export class GenevaDriveError extends Error {
  override readonly name: string = 'GenevaDriveError';

  constructor(message?: string, options?: GenevaDriveErrorOptions) {
    super(message, options);
    Object.setPrototypeOf(this, new.target.prototype);
  }
}
