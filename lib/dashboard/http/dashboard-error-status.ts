import { HttpException, HttpStatus } from '@nestjs/common';
import { GenevaDriveError } from '../../errors/geneva-drive.error';
import { httpStatusOf } from '../../http/error-http-status';

/** The status and message a refused request answers with, or null for a server fault. */
export function refusalOf(error: unknown): { status: number; message: string } | null {
  if (error instanceof HttpException) {
    return { status: error.getStatus(), message: error.message };
  }
  if (error instanceof GenevaDriveError) {
    const status = httpStatusOf(error);
    return status === null ? null : { status, message: error.message };
  }
  return null;
}

/** A library error as the HttpException the app's exception filters expect. */
export function asHttpException(error: unknown): unknown {
  const refusal = refusalOf(error);
  if (refusal === null || error instanceof HttpException) return error;
  return new HttpException(
    { statusCode: refusal.status, error: HttpStatus[refusal.status], message: refusal.message },
    refusal.status,
  );
}
