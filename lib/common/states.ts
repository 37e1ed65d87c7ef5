import type { StepExecutionState, WorkflowState } from '../interfaces/states.interface';

/** Every workflow state. */
export const WORKFLOW_STATES: readonly WorkflowState[] = [
  'ready',
  'performing',
  'paused',
  'finished',
  'canceled',
];

/** Workflow states in which a workflow is still "ongoing". */
export const ONGOING_WORKFLOW_STATES: readonly WorkflowState[] = ['ready', 'performing', 'paused'];

/** Execution states that make an execution the workflow's current one. */
export const ACTIVE_EXECUTION_STATES: readonly StepExecutionState[] = [
  'scheduled',
  'waiting',
  'in_progress',
];

/** Workflows whose scheduled executions are expected to run. */
export const RUNNABLE_WORKFLOW_STATES: readonly WorkflowState[] = ['ready', 'performing'];
