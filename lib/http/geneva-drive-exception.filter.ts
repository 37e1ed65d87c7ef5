import { type ArgumentsHost, Catch, HttpException } from '@nestjs/common';
import { BaseExceptionFilter } from '@nestjs/core';
import { GenevaDriveError } from '../errors';
import { httpStatusOf } from './error-http-status';

/**
 * Answers HTTP requests that fail with a library error with the matching status and a body
 * `{ statusCode, error, message }` (`error` is the error's class name): `WorkflowNotFoundError`
 * 404; `InvalidStateError`, `WorkflowNotOngoingError`, `WorkflowAlreadyOngoingError`,
 * `StepNotDefinedError` 409; `InvalidArgumentError`, `StepConfigurationError` 400;
 * `SignalPayloadTooLargeError` 413. Any other library error is the server's fault and gets
 * Nest's own 500 answer, logged.
 *
 * Register it like any Nest filter: `{ provide: APP_FILTER, useClass: GenevaDriveExceptionFilter }`
 * in a module, or `app.useGlobalFilters(new GenevaDriveExceptionFilter(app.getHttpAdapter()))`.
 * Outside HTTP (microservices, GraphQL) the error is rethrown for that context's own handling.
 */
@Catch(GenevaDriveError)
export class GenevaDriveExceptionFilter extends BaseExceptionFilter<GenevaDriveError> {
  override catch(exception: GenevaDriveError, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw exception;
    const status = httpStatusOf(exception);
    if (status === null) {
      super.catch(exception, host);
      return;
    }
    const body = { statusCode: status, error: exception.name, message: exception.message };
    super.catch(new HttpException(body, status, { cause: exception }), host);
  }
}
