import type { SignalEntity } from '../entities/signal.entity';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import { cell, formatFields, formatTable } from './text-table';

const hero = (row: WorkflowEntity) =>
  row.heroType === null ? '-' : `${row.heroType} ${row.heroId}`;
const step = (row: WorkflowEntity) => row.currentStepName ?? row.nextStepName;

/** `list`: one line per workflow. */
export function workflowsTable(rows: readonly WorkflowEntity[]): string {
  if (rows.length === 0) return 'No workflows match.';
  return formatTable(
    ['ID', 'CLASS', 'STATE', 'STEP', 'HERO', 'CREATED'],
    rows.map((row) => [
      row.id,
      row.type,
      row.state,
      cell(step(row)),
      hero(row),
      cell(row.createdAt),
    ]),
  );
}

/** `show`: the workflow's fields. */
export function workflowFields(row: WorkflowEntity): string {
  return formatFields([
    ['id', row.id],
    ['class', row.type],
    ['state', row.state],
    ['hero', hero(row)],
    ['current step', row.currentStepName],
    ['next step', row.nextStepName],
    ['allow multiple', row.allowMultiple],
    ['transitioned at', row.transitionedAt],
    ['created at', row.createdAt],
    ['updated at', row.updatedAt],
    ['metadata', row.metadata],
  ]);
}

/** `show`: the step executions, oldest first. */
export function executionsTable(rows: readonly StepExecutionEntity[]): string {
  if (rows.length === 0) return 'No step executions.';
  return formatTable(
    [
      'ID',
      'STEP',
      'STATE',
      'OUTCOME',
      'SCHEDULED FOR',
      'WAIT DEADLINE',
      'STARTED',
      'FINISHED',
      'ERROR',
    ],
    rows.map((row) => [
      row.id,
      row.stepName,
      row.state,
      cell(row.outcome),
      cell(row.scheduledFor),
      // Only a parked `waitFor` step with a `timeout` has one (SPEC §16.3).
      cell(row.waitDeadlineAt),
      cell(row.startedAt),
      cell(row.finishedAt),
      row.errorClassName === null ? '-' : `${row.errorClassName}: ${row.errorMessage ?? ''}`,
    ]),
  );
}

/** `show`: the signals, oldest first. */
export function signalsTable(rows: readonly SignalEntity[]): string {
  if (rows.length === 0) return 'No signals.';
  return formatTable(
    ['ID', 'NAME', 'KEY', 'STATE', 'CLAIMED', 'CONSUMED', 'CREATED', 'PAYLOAD'],
    rows.map((row) => [
      row.id,
      row.name,
      cell(row.idempotencyKey),
      row.state,
      String(row.claimed),
      String(row.consumed),
      cell(row.createdAt),
      cell(row.payload),
    ]),
  );
}
