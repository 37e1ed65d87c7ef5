import type { NewExecution, NewSignal, NewWorkflow } from '../ports/workflow.repository';
import { SignalEntity } from './signal.entity';
import { StepExecutionEntity } from './step-execution.entity';
import { WorkflowEntity } from './workflow.entity';

/** A new workflow row as every adapter stores it: `ready`, no step yet. */
export function newWorkflowRow(id: string, fields: NewWorkflow, now: Date): WorkflowEntity {
  return Object.assign(new WorkflowEntity(), {
    id,
    state: 'ready',
    currentStepName: null,
    nextStepName: null,
    transitionedAt: null,
    createdAt: now,
    updatedAt: now,
    ...fields,
  } satisfies Partial<WorkflowEntity>);
}

/** A new step execution as every adapter stores it: `scheduled`, its job id its own id. */
export function newExecutionRow(id: string, fields: NewExecution, now: Date): StepExecutionEntity {
  return Object.assign(new StepExecutionEntity(), {
    id,
    state: 'scheduled',
    outcome: null,
    startedAt: null,
    completedAt: null,
    failedAt: null,
    canceledAt: null,
    skippedAt: null,
    finishedAt: null,
    errorClassName: null,
    errorMessage: null,
    errorBacktrace: null,
    jobId: id,
    metadata: null,
    cursor: null,
    continuesFromId: null,
    signalId: null,
    waitingSince: null,
    waitDeadlineAt: null,
    createdAt: now,
    updatedAt: now,
    ...fields,
  } satisfies Partial<StepExecutionEntity>);
}

/** A new signal as every adapter stores it: `pending`, never claimed. */
export function newSignalRow(id: string, fields: NewSignal, now: Date): SignalEntity {
  return Object.assign(new SignalEntity(), {
    id,
    state: 'pending',
    claimedAt: null,
    consumedAt: null,
    claimed: 0,
    consumed: 0,
    createdAt: now,
    updatedAt: now,
    ...fields,
  } satisfies Partial<SignalEntity>);
}
