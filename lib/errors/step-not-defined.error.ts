import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import { GenevaDriveError, type GenevaDriveErrorOptions } from './geneva-drive.error';

/** What the runner attaches to a `StepNotDefinedError`. */
export interface StepNotDefinedDetails extends GenevaDriveErrorOptions {
  stepExecution?: StepExecutionEntity;
  workflow?: WorkflowEntity;
}

/**
 * A step name that the workflow class does not (or no longer) define. Carries the execution
 * and workflow when raised by the runner; absent when raised by `resume()`/`resumeAt()`.
 */
export class StepNotDefinedError extends GenevaDriveError {
  override readonly name: string = 'StepNotDefinedError';
  readonly stepExecution?: StepExecutionEntity;
  readonly workflow?: WorkflowEntity;

  constructor(message?: string, details: StepNotDefinedDetails = {}) {
    super(message, { cause: details.cause });
    this.stepExecution = details.stepExecution;
    this.workflow = details.workflow;
  }
}
