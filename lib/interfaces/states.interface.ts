/**
 * A number of milliseconds (finite, >= 0) or a string such as `'30s'`, `'5m'`, `'2h'`, `'7d'`,
 * `'2 days'`. Anything else is rejected at the earliest moment (boot for decorator options).
 */
export type Duration = number | string;

/** Lifecycle of a workflow. `finished` and `canceled` are terminal. */
export type WorkflowState = 'ready' | 'performing' | 'paused' | 'finished' | 'canceled';

/** Lifecycle of one step execution. */
export type StepExecutionState =
  'scheduled' | 'waiting' | 'in_progress' | 'completed' | 'failed' | 'canceled' | 'skipped';

/** Why a step execution ended the way it did. */
export type StepExecutionOutcome =
  | 'success'
  | 'continued'
  | 'reattempted'
  | 'skipped'
  | 'canceled'
  | 'failed'
  | 'recovered'
  | 'workflow_paused';

/** Lifecycle of a signal. */
export type SignalState = 'pending' | 'claimed' | 'consumed';
