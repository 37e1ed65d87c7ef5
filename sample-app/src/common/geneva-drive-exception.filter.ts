import {
  Catch,
  HttpStatus,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import {
  GenevaDriveError,
  InvalidArgumentError,
  InvalidStateError,
  MissingMigrationError,
  StepConfigurationError,
  StepNotDefinedError,
  WorkflowAlreadyOngoingError,
  WorkflowNotFoundError,
  WorkflowNotOngoingError,
} from 'nestjs-geneva-drive';

/** The HTTP status for a library error; null for errors that are the server's fault. */
function statusOf(error: GenevaDriveError): HttpStatus | null {
  if (error instanceof WorkflowNotFoundError) return HttpStatus.NOT_FOUND;
  if (
    error instanceof InvalidStateError ||
    error instanceof WorkflowAlreadyOngoingError ||
    error instanceof WorkflowNotOngoingError ||
    error instanceof StepNotDefinedError
  ) {
    return HttpStatus.CONFLICT;
  }
  // A missing migration is a deployment problem, not a bad request.
  if (error instanceof MissingMigrationError) return null;
  // Reached from requests: unknown option keys, a workflow name nobody registered (?workflow=X).
  if (error instanceof InvalidArgumentError || error instanceof StepConfigurationError) {
    return HttpStatus.BAD_REQUEST;
  }
  return null;
}

/** Maps nestjs-geneva-drive errors to HTTP responses `{ statusCode, error, message }`. */
@Catch(GenevaDriveError)
export class GenevaDriveExceptionFilter implements ExceptionFilter<GenevaDriveError> {
  private readonly logger = new Logger(GenevaDriveExceptionFilter.name);

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(error: GenevaDriveError, host: ArgumentsHost): void {
    const { httpAdapter } = this.adapterHost;
    const response: unknown = host.switchToHttp().getResponse();
    const status = statusOf(error);
    if (status === null) {
      this.logger.error(error.message, error.stack);
      httpAdapter.reply(
        response,
        { statusCode: 500, error: error.name, message: 'Internal server error' },
        HttpStatus.INTERNAL_SERVER_ERROR,
      );
      return;
    }
    httpAdapter.reply(
      response,
      { statusCode: status, error: error.name, message: error.message },
      status,
    );
  }
}
