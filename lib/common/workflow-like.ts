import type { WorkflowEntity } from '../entities/workflow.entity';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { WorkflowNotFoundError } from '../errors/workflow-not-found.error';
import type { WorkflowLike } from '../interfaces/workflow-service.interface';
import { describeValue } from './input-guards';
import { isUuid } from './uuid';

/**
 * The id of a `WorkflowLike` (an entity or its id). A UUID is lower-cased, so an id written in
 * capitals finds its row on every database (PostgreSQL's `uuid` ignores case, MariaDB's `char(36)`
 * and SQLite's text do not). Anything but a string or an object with a string `id` is an
 * `InvalidArgumentError`; `method` names the caller in the message.
 */
export function workflowIdOf(workflow: WorkflowLike, method = 'This method'): string {
  let id: unknown;
  if (typeof workflow === 'string') id = workflow;
  else if (typeof (workflow as Partial<WorkflowEntity> | null)?.id === 'string') id = workflow.id;
  else {
    throw new InvalidArgumentError(
      `${method} takes a WorkflowEntity or a workflow id string, but got ${describeValue(workflow)}.`,
    );
  }
  return isUuid(id) ? id.toLowerCase() : (id as string);
}

/** The error for an id that names no workflow row (including one that is not a UUID at all). */
export function workflowNotFound(id: string): WorkflowNotFoundError {
  return new WorkflowNotFoundError(
    isUuid(id)
      ? `No workflow with id '${id}'.`
      : `No workflow with id ${describeValue(id)}: workflow ids are UUIDs (WorkflowEntity.id).`,
  );
}
