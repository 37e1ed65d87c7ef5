import type { SchemaFeatures } from '../ports/workflow.repository';

/** The step-execution columns of the resumable-steps migration. */
export const RESUMABLE_COLUMNS: readonly string[] = ['cursor', 'continues_from_id'];
/** The step-execution columns of the signals migration. */
export const SIGNAL_COLUMNS: readonly string[] = ['signal_id', 'waiting_since'];
/** The step-execution column of the signal-timeouts migration. */
export const WAIT_TIMEOUT_COLUMNS: readonly string[] = ['wait_deadline_at'];

/** The workflow columns of the workflow-context migration. */
export const WORKFLOW_CONTEXT_COLUMNS: readonly string[] = ['context', 'trace_parent'];

/** Whether a column of the library's tables exists, given which optional migrations have run. */
export function isColumnPresent(features: SchemaFeatures, databaseName: string): boolean {
  if (RESUMABLE_COLUMNS.includes(databaseName)) return features.resumable;
  if (SIGNAL_COLUMNS.includes(databaseName)) return features.signals;
  if (WAIT_TIMEOUT_COLUMNS.includes(databaseName)) return features.waitTimeouts;
  if (WORKFLOW_CONTEXT_COLUMNS.includes(databaseName)) return features.workflowContext;
  return true;
}
