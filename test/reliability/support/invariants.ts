import type { DataSource } from 'typeorm';
import { RELIABILITY_STEPS } from '../../fixtures/reliability.workflows';

/** One journal row: a step body (or one item of a resumable step) ran. */
interface JournalRow {
  workflow_id: string;
  step_name: string;
  execution_id: string;
  item: number | null;
  signal_id: string | null;
  worker: string;
  pid: number;
}

interface ExecutionRow {
  id: string;
  workflow_id: string;
  step_name: string;
  state: string;
  outcome: string | null;
  job_id: string | null;
  continues_from_id: string | null;
  signal_id: string | null;
  error_class_name: string | null;
  error_message: string | null;
  created_at: Date;
}

interface WorkflowRow {
  id: string;
  type: string;
  state: string;
}

interface SignalRow {
  id: string;
  workflow_id: string;
  name: string;
  state: string;
  claimed: number;
  consumed: number;
}

export interface InvariantOptions {
  /** The workflows the scenario started, and the state each must end in (default 'finished'). */
  workflowIds: string[];
  expectedState?: (workflowId: string) => string;
  /**
   * Whether a body run whose execution ended `recovered` is explained: by default, only when the
   * process that ran it was SIGKILLed (it died between the body and the commit).
   */
  retryExplained: (row: JournalRow) => boolean;
  /** Why a retry is allowed, for the report ("its worker was SIGKILLed"). */
  retryReason: string;
  /** Items of the resumable walk. */
  items: number;
  /** A scenario without any death: no execution may end `recovered` at all. */
  noRecovery?: boolean;
}

/** What the checks found: report lines, and violations per workflow id. */
export interface InvariantReport {
  lines: string[];
  violations: Map<string, string[]>;
}

const ACTIVE = ['scheduled', 'in_progress', 'waiting'];

/**
 * The invariants of issue #9, checked against the database after a scenario:
 * every workflow reaches its expected state; no execution is left active (none lost, none stuck);
 * each step has exactly one successful execution, in declaration order, and every other execution
 * of it is explained (`recovered` after a death, `continued` for a resumable chain); no execution
 * has two successors (no transition applied twice); each step body ran exactly once, or, when the
 * process died between the body and its commit, once more with the retry visible as a `recovered`
 * execution; every item of a resumable step ran, repeated only after such a death; every `go`
 * signal was stored once, consumed once, and reached the step that waited for it; job ids follow
 * `<executionId>[_n]`.
 */
export async function checkInvariants(
  dataSource: DataSource,
  options: InvariantOptions,
): Promise<InvariantReport> {
  const ids = options.workflowIds;
  const workflows = await dataSource.query<WorkflowRow[]>(
    'SELECT id, type, state FROM geneva_drive_workflows WHERE id = ANY($1)',
    [ids],
  );
  const executions = await dataSource.query<ExecutionRow[]>(
    `SELECT id, workflow_id, step_name, state, outcome, job_id, continues_from_id, signal_id, error_class_name, error_message, created_at
     FROM geneva_drive_step_executions WHERE workflow_id = ANY($1) ORDER BY created_at, id`,
    [ids],
  );
  const signals = await dataSource.query<SignalRow[]>(
    'SELECT id, workflow_id, name, state, claimed, consumed FROM geneva_drive_signals WHERE workflow_id = ANY($1)',
    [ids],
  );
  const journal = await dataSource.query<JournalRow[]>(
    `SELECT workflow_id, step_name, execution_id, item, signal_id, worker, pid
     FROM reliability_journal WHERE workflow_id = ANY($1) ORDER BY id`,
    [ids],
  );

  const violations = new Map<string, string[]>();
  const fail = (workflowId: string, problem: string) =>
    violations.set(workflowId, [...(violations.get(workflowId) ?? []), problem]);
  const byWorkflow = <T extends { workflow_id: string }>(rows: T[]) => {
    const map = new Map<string, T[]>();
    for (const row of rows) map.set(row.workflow_id, [...(map.get(row.workflow_id) ?? []), row]);
    return map;
  };
  const executionsOf = byWorkflow(executions);
  const journalOf = byWorkflow(journal);
  const signalsOf = byWorkflow(signals);
  const executionById = new Map(executions.map((execution) => [execution.id, execution]));

  const tally = {
    finished: 0,
    steps: 0,
    bodies: 0,
    bodiesOnce: 0,
    bodiesRetried: 0,
    recovered: 0,
    items: 0,
    itemsRepeated: 0,
    continued: 0,
    signals: 0,
    reenqueued: 0,
  };

  for (const id of ids) {
    if (!workflows.some((workflow) => workflow.id === id)) fail(id, 'workflow row is missing');
  }
  for (const workflow of workflows) {
    const expected = options.expectedState?.(workflow.id) ?? 'finished';
    if (workflow.state !== expected) {
      const history = (executionsOf.get(workflow.id) ?? []).map(
        (row) =>
          `${row.step_name}:${row.state}/${row.outcome}${row.error_message ? ` ${row.error_class_name}: ${row.error_message}` : ''}`,
      );
      const why = ` (history: ${history.slice(-3).join(', ') || 'none'})`;
      fail(workflow.id, `state is ${workflow.state}, expected ${expected}${why}`);
      continue;
    }
    tally.finished += 1;
    const rows = executionsOf.get(workflow.id) ?? [];
    const entries = journalOf.get(workflow.id) ?? [];
    for (const row of rows) {
      if (ACTIVE.includes(row.state))
        fail(workflow.id, `execution ${row.id} (${row.step_name}) left ${row.state}`);
      if (row.job_id !== row.id && !new RegExp(`^${row.id}_\\d+$`).test(row.job_id ?? '')) {
        fail(workflow.id, `execution ${row.id} has job id ${row.job_id}`);
      }
      if (row.job_id !== row.id) tally.reenqueued += 1;
      if (row.outcome === 'recovered') tally.recovered += 1;
      if (row.outcome === 'continued') tally.continued += 1;
    }
    if (expected !== 'finished') continue;

    const steps = RELIABILITY_STEPS[workflow.type];
    const successOrder: string[] = [];
    for (const step of steps) {
      tally.steps += 1;
      const ofStep = rows.filter((row) => row.step_name === step);
      const resumable = step === 'walk';
      const successes = ofStep.filter((row) => row.outcome === 'success');
      if (successes.length !== 1) {
        fail(workflow.id, `step ${step} has ${successes.length} successful executions, expected 1`);
      }
      for (const row of ofStep) {
        const explained =
          row.outcome === 'success' ||
          (row.outcome === 'recovered' && !options.noRecovery) ||
          (row.outcome === 'continued' && resumable);
        if (!explained) {
          fail(workflow.id, `step ${step} execution ${row.id} ended ${row.state}/${row.outcome}`);
        }
      }
      const stepEntries = entries.filter((entry) => entry.step_name === step);
      if (resumable) {
        checkWalk(workflow.id, ofStep, stepEntries);
      } else {
        checkBody(workflow.id, step, ofStep, stepEntries);
      }
      if (successes[0]) successOrder.push(step);
    }
    const createdOrder = rows
      .filter((row) => row.outcome === 'success')
      .map((row) => row.step_name);
    if (createdOrder.join() !== successOrder.join()) {
      fail(
        workflow.id,
        `steps succeeded in the order ${createdOrder.join(', ')}, expected ${steps.join(', ')}`,
      );
    }

    if (workflow.type === 'ReliabilitySignal') checkSignal(workflow.id, rows, entries);
  }

  /** A plain step: one body run per execution; only the success and explained retries ran it. */
  function checkBody(
    workflowId: string,
    step: string,
    ofStep: ExecutionRow[],
    entries: JournalRow[],
  ) {
    for (const row of ofStep) {
      const runs = entries.filter((entry) => entry.execution_id === row.id);
      if (runs.length > 1)
        fail(workflowId, `step ${step} execution ${row.id} ran its body ${runs.length} times`);
      if (row.outcome === 'success' && runs.length !== 1) {
        fail(
          workflowId,
          `step ${step} succeeded (execution ${row.id}) but its body ran ${runs.length} times`,
        );
      }
    }
    for (const entry of entries) {
      const execution = executionById.get(entry.execution_id);
      if (!execution || execution.step_name !== step) {
        fail(workflowId, `step ${step} body ran for unknown execution ${entry.execution_id}`);
      } else if (execution.outcome === 'recovered' && !options.retryExplained(entry)) {
        fail(
          workflowId,
          `step ${step} body ran in execution ${execution.id} (worker ${entry.worker}, pid ${entry.pid}) and again, but that run is not explained: ${options.retryReason} does not hold`,
        );
      } else if (execution.outcome !== 'success' && execution.outcome !== 'recovered') {
        fail(
          workflowId,
          `step ${step} body ran in execution ${execution.id} that ended ${execution.outcome}`,
        );
      }
    }
    tally.bodies += 1;
    if (entries.length === 1) tally.bodiesOnce += 1;
    else if (entries.length > 1) tally.bodiesRetried += 1;
  }

  /** The resumable walk: every item ran; an item repeats only after an explained death. */
  function checkWalk(workflowId: string, chain: ExecutionRow[], entries: JournalRow[]) {
    const successors = new Set<string>();
    for (const row of chain.slice(1)) {
      if (!row.continues_from_id || !chain.some((other) => other.id === row.continues_from_id)) {
        fail(
          workflowId,
          `walk execution ${row.id} does not continue the chain (continues_from_id ${row.continues_from_id})`,
        );
      }
    }
    for (const row of chain) {
      if (row.continues_from_id && successors.has(row.continues_from_id)) {
        fail(workflowId, `walk execution ${row.continues_from_id} has two successors`);
      }
      if (row.continues_from_id) successors.add(row.continues_from_id);
    }
    for (let item = 0; item < options.items; item++) {
      tally.items += 1;
      const runs = entries.filter((entry) => entry.item === item);
      if (runs.length === 0) fail(workflowId, `walk item ${item} never ran`);
      if (runs.length > 1) tally.itemsRepeated += 1;
      for (const earlier of runs.slice(0, -1)) {
        const execution = executionById.get(earlier.execution_id);
        if (execution?.outcome !== 'recovered' || !options.retryExplained(earlier)) {
          fail(
            workflowId,
            `walk item ${item} ran in execution ${earlier.execution_id} (${execution?.outcome ?? 'unknown'}, pid ${earlier.pid}) and again, unexplained`,
          );
        }
      }
      const perExecution = new Set(runs.map((entry) => entry.execution_id));
      if (perExecution.size !== runs.length)
        fail(workflowId, `walk item ${item} ran twice in one execution`);
    }
  }

  /** One `go` signal, consumed once, received by the successful awaitGo execution. */
  function checkSignal(workflowId: string, rows: ExecutionRow[], entries: JournalRow[]) {
    const gos = (signalsOf.get(workflowId) ?? []).filter((signal) => signal.name === 'go');
    if (gos.length !== 1) {
      fail(workflowId, `${gos.length} 'go' signal rows, expected 1`);
      return;
    }
    const [go] = gos;
    tally.signals += 1;
    if (go.state !== 'consumed' || go.consumed !== 1) {
      fail(
        workflowId,
        `signal ${go.id} is ${go.state} with consumed=${go.consumed}, expected consumed once`,
      );
    }
    const success = rows.find((row) => row.step_name === 'awaitGo' && row.outcome === 'success');
    if (success && success.signal_id !== go.id) {
      fail(workflowId, `awaitGo succeeded with signal ${success.signal_id}, expected ${go.id}`);
    }
    const received = entries.find((entry) => entry.execution_id === success?.id);
    if (received && received.signal_id !== go.id) {
      fail(workflowId, `awaitGo body received signal ${received.signal_id}, expected ${go.id}`);
    }
  }

  const lines = [
    `${tally.finished}/${ids.length} workflows reached their expected state; none left with an active execution`,
    `${tally.steps} steps: each exactly one successful execution, in declaration order; ` +
      `${tally.recovered} execution(s) recovered by housekeeping, ${tally.continued} resumable continuation(s), ${tally.reenqueued} re-enqueue(s) under a new job id`,
    `${tally.bodies} plain step bodies: ${tally.bodiesOnce} ran exactly once, ${tally.bodiesRetried} ran twice ` +
      `(each retry visible as a 'recovered' execution, and explained: ${options.retryReason})`,
    `${tally.items} resumable items: all ran; ${tally.itemsRepeated} repeated, each after an explained death before its checkpoint`,
    `${tally.signals} 'go' signals: each stored once, consumed once, received by the step that waited for it`,
    `no execution has two successors; job ids are <executionId>[_n]`,
  ];
  return { lines, violations };
}

/** The assertion message: every broken workflow id with its problems. */
export function describeViolations(report: InvariantReport): string {
  if (report.violations.size === 0) return 'no violations';
  return [
    `Invariants broken in ${report.violations.size} workflow(s):`,
    ...[...report.violations].map(([id, problems]) => `  ${id}: ${problems.join('; ')}`),
  ].join('\n');
}
