import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import { GenevaDriveError } from './geneva-drive.error';

/**
 * A step name that the workflow class does not (or no longer) define. Carries the execution
 * and workflow when raised by the runner; absent when raised by `resume()`/`resumeAt()`.
 */
export class StepNotDefinedError extends GenevaDriveError {
  override readonly name: string = 'StepNotDefinedError';

  constructor(
    message: string,
    readonly stepExecution?: StepExecutionEntity,
    readonly workflow?: WorkflowEntity,
  ) {
    super(message);
  }
}
