import { SignalEntity } from './signal.entity';
import { StepExecutionEntity } from './step-execution.entity';
import { WorkflowEntity } from './workflow.entity';

export { SignalEntity, StepExecutionEntity, WorkflowEntity };

/** The three entity classes, to add to the app's DataSource `entities`. */
export const GENEVA_DRIVE_ENTITIES: Array<
  typeof WorkflowEntity | typeof StepExecutionEntity | typeof SignalEntity
> = [WorkflowEntity, StepExecutionEntity, SignalEntity];
