import type { SignalEntity } from '../../entities/signal.entity';
import type { SignalStepRef, WokenExecution } from '../../ports/workflow.repository';
import type { BoundStatement } from './bound-statement.interface';
import type { LibraryTable } from './library-table';
import type { LibraryTables } from './postgres-query-batch';
import { quoteIdentifier } from '../sql-identifiers';

/** Steps as one JSON parameter: step names by workflow type, for `(steps -> type) ? step`. */
function stepsParameter(refs: readonly SignalStepRef[]): string {
  const byType: Record<string, string[]> = {};
  for (const ref of refs) (byType[ref.workflowType] ??= []).push(ref.stepName);
  return JSON.stringify(byType);
}

/** What `WokenExecution` names of each row `wake` returns. */
export const WOKEN_PROPERTIES = [
  'id',
  'workflowId',
  'stepName',
  'signalId',
  'scheduledFor',
  'createdAt',
  'jobId',
] as const satisfies ReadonlyArray<keyof WokenExecution>;

/** A library table's column by entity property, quoted. */
const column = (table: LibraryTable<object>, property: string) =>
  quoteIdentifier(table.columnName(property));

/**
 * The writes of a signal delivery that decides itself (`deliverSignalAtOnce`). They follow the
 * workflow's row lock and its duplicate lookup in one message with the COMMIT, each guarded by
 * the rows as locked, so together they write what `SignalSender` decides from those reads: the
 * parked executions at the `wakes` steps woken unless the workflow is paused, finished or
 * canceled, or the idempotency key is taken; then the signal inserted into an ongoing workflow
 * (a taken key skips it, the unique index), claimed by what was woken. When the workflow is not
 * paused and has an execution parked at an `undecided` step, neither writes anything.
 */
export class SignalDeliveryStatements {
  constructor(private readonly tables: LibraryTables) {}

  /**
   * Wakes the workflow's parked executions at `wakes`: scheduled now, pinned to `signal`, their
   * next job id as `nextJobId()` makes it. Returns the woken rows, whole.
   */
  wake(
    signal: SignalEntity,
    wakes: readonly SignalStepRef[],
    undecided: readonly SignalStepRef[],
  ): BoundStatement {
    const { workflows, executions, signals } = this.tables;
    const values: unknown[] = [
      signal.id,
      signal.createdAt.toISOString(),
      signal.workflowId,
      stepsParameter(wakes),
    ];
    // The whole row: the woken job's prepare can start from it (see WakeSnapshots).
    const returnedColumns = executions.wholeRowList('execution');
    const id = `execution.${column(executions, 'id')}::text`;
    const jobIdColumn = `execution.${column(executions, 'jobId')}`;
    const suffixSql = `substr(${jobIdColumn}, length(${id}) + 2)`;
    // nextJobId(): `<id>_<n + 1>` after `<id>_<n>`, `<id>_1` after anything else.
    const nextJobIdSql =
      `${id} || '_' || (CASE WHEN starts_with(${jobIdColumn}, ${id}) ` +
      `AND ${suffixSql} ~ '^[0-9]{1,15}$' THEN ${suffixSql}::bigint + 1 ELSE 1 END)`;
    const assignmentsSql = [
      `${column(executions, 'state')} = 'scheduled'`,
      `${column(executions, 'signalId')} = $1`,
      `${column(executions, 'scheduledFor')} = $2`,
      `${column(executions, 'waitingSince')} = NULL`,
      `${column(executions, 'updatedAt')} = $2`,
      `${column(executions, 'jobId')} = ${nextJobIdSql}`,
    ].join(', ');
    let guardSql =
      `workflow.${column(workflows, 'id')} = $3 ` +
      `AND workflow.${column(workflows, 'state')} NOT IN ('paused', 'finished', 'canceled') ` +
      `AND execution.${column(executions, 'workflowId')} = $3 ` +
      `AND execution.${column(executions, 'state')} = 'waiting' ` +
      `AND ($4::jsonb -> workflow.${column(workflows, 'type')}) ? execution.${column(executions, 'stepName')}`;
    if (signal.idempotencyKey !== null) {
      guardSql +=
        ` AND NOT EXISTS (SELECT 1 FROM ${signals.quotedName} AS taken ` +
        `WHERE taken.${column(signals, 'workflowId')} = $3 ` +
        `AND taken.${column(signals, 'name')} = $${values.push(signal.name)} ` +
        `AND taken.${column(signals, 'idempotencyKey')} = $${values.push(signal.idempotencyKey)})`;
    }
    if (undecided.length > 0)
      guardSql += ` AND ${this.noneParkedSql(`$${values.push(stepsParameter(undecided))}`)}`;
    const text =
      `UPDATE ${executions.quotedName} AS execution SET ${assignmentsSql} ` +
      `FROM ${workflows.quotedName} AS workflow WHERE ${guardSql} RETURNING ${returnedColumns}`;
    return { text, values };
  }

  /**
   * The signal, inserted into an ongoing workflow (unless it is running and has an execution
   * parked at an `undecided` step), claimed once by each execution `wake` pinned to it.
   */
  insert(signal: SignalEntity, undecided: readonly SignalStepRef[]): BoundStatement {
    const { workflows, executions, signals } = this.tables;
    const { duplicateDelivery: _notAColumn, ...row } = signal;
    const values: unknown[] = [];
    // What `wake` pinned to the signal, and when it scheduled them: the claim.
    const claimSql = {
      state: `CASE WHEN woken.count > 0 THEN 'claimed' ELSE 'pending' END`,
      claimed: 'woken.count',
      claimedAt: 'woken.at',
    };
    return signals.insertSelect(
      row,
      claimSql,
      (before) => {
        const slot = (value: unknown) => `$${before + values.push(value)}`;
        const state = `workflow.${column(workflows, 'state')}`;
        const undecidedSql =
          undecided.length > 0
            ? ` AND (${state} = 'paused' OR ${this.noneParkedSql(slot(stepsParameter(undecided)))})`
            : '';
        return {
          whereSql:
            `EXISTS (SELECT 1 FROM ${workflows.quotedName} AS workflow ` +
            `WHERE workflow.${column(workflows, 'id')} = ${slot(signal.workflowId)} ` +
            `AND ${state} NOT IN ('finished', 'canceled')${undecidedSql})`,
          fromSql:
            `(SELECT count(*)::int AS count, max(${column(executions, 'scheduledFor')}) AS at ` +
            `FROM ${executions.quotedName} ` +
            `WHERE ${column(executions, 'signalId')} = ${slot(signal.id)}) AS woken`,
        };
      },
      values,
    );
  }

  /**
   * No execution of the locked `workflow` is parked at one of the steps of `placeholderSql` (the
   * placeholder of a `stepsParameter`).
   */
  private noneParkedSql(placeholderSql: string): string {
    const { workflows, executions } = this.tables;
    return (
      `NOT EXISTS (SELECT 1 FROM ${executions.quotedName} AS parked ` +
      `WHERE parked.${column(executions, 'workflowId')} = workflow.${column(workflows, 'id')} ` +
      `AND parked.${column(executions, 'state')} = 'waiting' ` +
      `AND (${placeholderSql}::jsonb -> workflow.${column(workflows, 'type')}) ? parked.${column(executions, 'stepName')})`
    );
  }
}
