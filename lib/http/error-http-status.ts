import { HttpStatus } from '@nestjs/common';
import {
  type GenevaDriveError,
  InvalidArgumentError,
  InvalidStateError,
  MissingMigrationError,
  SignalPayloadTooLargeError,
  StepConfigurationError,
  StepNotDefinedError,
  WorkflowAlreadyOngoingError,
  WorkflowNotFoundError,
  WorkflowNotOngoingError,
} from '../errors';

/**
 * The HTTP status a library error answers a request with, or null when the error is the server's
 * fault (a missing migration, a cursor too large for its column, an error inside the engine): those
 * stay 500s and are logged.
 */
export function httpStatusOf(error: GenevaDriveError): HttpStatus | null {
  // A deployment problem, not a bad request (it extends StepConfigurationError).
  if (error instanceof MissingMigrationError) return null;
  if (error instanceof WorkflowNotFoundError) return HttpStatus.NOT_FOUND;
  if (
    error instanceof InvalidStateError ||
    error instanceof WorkflowNotOngoingError ||
    error instanceof WorkflowAlreadyOngoingError ||
    // resume()/resumeAt() towards a step the workflow's class does not (or no longer) define.
    error instanceof StepNotDefinedError
  ) {
    return HttpStatus.CONFLICT;
  }
  if (error instanceof SignalPayloadTooLargeError) return HttpStatus.PAYLOAD_TOO_LARGE;
  // Both reach WorkflowService from request input: a bad argument, or a workflow name (or job
  // options) that no registered workflow accepts. At boot a StepConfigurationError never meets
  // a request.
  if (error instanceof InvalidArgumentError || error instanceof StepConfigurationError) {
    return HttpStatus.BAD_REQUEST;
  }
  return null;
}
