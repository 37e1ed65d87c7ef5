import type { WorkflowEntity } from '../entities/workflow.entity';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { WorkflowNotFoundError } from '../errors/workflow-not-found.error';
import type { WorkflowLike } from '../interfaces/workflow-service.interface';

/** The id of a `WorkflowLike` (an entity or its id). */
export function workflowIdOf(workflow: WorkflowLike): string {
  if (typeof workflow === 'string') return workflow;
  if (typeof (workflow as Partial<WorkflowEntity> | null)?.id === 'string') return workflow.id;
  throw new InvalidArgumentError('Expected a WorkflowEntity or a workflow id string.');
}

/** The error for an id that names no workflow row. */
export function workflowNotFound(id: string): WorkflowNotFoundError {
  return new WorkflowNotFoundError(`No workflow with id '${id}'.`);
}
