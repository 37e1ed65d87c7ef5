/** Table names owned by the library's migrations; TypeORM adds the DataSource's schema to them. */
export const WORKFLOWS_TABLE = 'geneva_drive_workflows';
export const STEP_EXECUTIONS_TABLE = 'geneva_drive_step_executions';
export const SIGNALS_TABLE = 'geneva_drive_signals';

/** The JSON columns of each table (all nullable), added by the base, resumable and signals migrations. */
export const JSON_COLUMNS: Readonly<Record<string, readonly string[]>> = {
  [WORKFLOWS_TABLE]: ['metadata'],
  [STEP_EXECUTIONS_TABLE]: ['metadata', 'cursor'],
  [SIGNALS_TABLE]: ['payload'],
};

/** Index names, shared by the migrations and by code that recognizes their violations. */
export const INDEX_NAMES = {
  workflowsType: 'index_geneva_drive_workflows_on_type',
  workflowsState: 'index_geneva_drive_workflows_on_state',
  workflowsHero: 'index_geneva_drive_workflows_on_hero',
  workflowsUniqueOngoing: 'index_geneva_drive_workflows_unique_ongoing',
  stepExecutionsScheduled: 'index_geneva_drive_step_executions_scheduled',
  stepExecutionsWorkflowCreated: 'index_geneva_drive_step_executions_workflow_created',
  stepExecutionsWorkflowState: 'index_geneva_drive_step_executions_workflow_state',
  stepExecutionsFinishedAt: 'index_geneva_drive_step_executions_on_finished_at',
  stepExecutionsOneActive: 'index_geneva_drive_step_executions_one_active',
  stepExecutionsInProgressStartedAt: 'index_geneva_drive_step_executions_in_progress_started_at',
  stepExecutionsContinuesFrom: 'index_geneva_drive_step_executions_on_continues_from_id',
  stepExecutionsSignal: 'index_geneva_drive_step_executions_on_signal_id',
  signalsDedup: 'index_geneva_drive_signals_dedup',
  signalsWorkflowState: 'index_geneva_drive_signals_workflow_state',
  stepExecutionsWaitDeadline: 'index_geneva_drive_step_executions_wait_deadline',
  signalsPendingCreated: 'index_geneva_drive_signals_pending_created',
  workflowsCreated: 'index_geneva_drive_workflows_on_created',
  workflowsStateCreated: 'index_geneva_drive_workflows_state_created',
  workflowsHeroId: 'index_geneva_drive_workflows_on_hero_id',
  workflowsStepCreated: 'index_geneva_drive_workflows_step_created',
  stepExecutionsWaitingSince: 'index_geneva_drive_step_executions_waiting_since',
  stepExecutionsPending: 'index_geneva_drive_step_executions_pending',
} as const;

/** Foreign key names (PostgreSQL and SQLite; MariaDB has none, SPEC §15.8). */
export const FOREIGN_KEY_NAMES = {
  stepExecutionsWorkflow: 'fk_geneva_drive_step_executions_workflow',
  signalsWorkflow: 'fk_geneva_drive_signals_workflow',
} as const;

/**
 * MariaDB/MySQL: the stored generated columns that stand in for the two partial unique indexes
 * (SPEC §15.8). Not mapped by the entities; the database computes them.
 */
export const GENERATED_KEY_COLUMNS = {
  workflowsOngoing: 'ongoing_unique_key',
  stepExecutionsActive: 'active_unique_key',
} as const;
