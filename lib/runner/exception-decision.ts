import { formatValue, parseDuration } from '../common/duration';
import { dueTimeProblem } from '../common/input-guards';
import type { StepDefinition } from '../discovery/step-definition.interface';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import { StepConfigurationError } from '../errors/step-configuration.error';
import { ExceptionPolicy, type PolicyWait } from '../api/exception-policy';
import { FlowControlSignal, type FlowControlRequest } from './flow-control';
import type { StepContextImpl } from './step-context';

/** What the runner does with an exception. */
export interface ExceptionDecision {
  action: 'pause' | 'cancel' | 'reattempt' | 'skip' | 'finish';
  /** Delay of a reattempt, in ms; null = now. */
  waitMs: number | null;
  /** Whether `errorReporter` hears about it. */
  report: boolean;
}

const DEFAULT_POLICY = new ExceptionPolicy('pause');

/**
 * Picks the policy for an error: step-level policies first (first match in order), then the
 * class's first matching specific policy, then its first blanket policy, then pause.
 */
export function selectPolicy(
  error: unknown,
  workflow: WorkflowDefinition,
  step: StepDefinition | undefined,
): ExceptionPolicy {
  const stepPolicy = step?.policies?.find((policy) => policy.captures(error));
  if (stepPolicy) return stepPolicy;
  const specific = workflow.policies.find((policy) => !policy.isBlanket && policy.captures(error));
  if (specific) return specific;
  return workflow.policies.find((policy) => policy.isBlanket) ?? DEFAULT_POLICY;
}

/**
 * Consecutive policy reattempts of a step before `current`, newest first. Manual
 * `ctx.reattempt()` is passed over; any other outcome, or `metadata.reattemptCountReset` (set by an
 * operator resume), ends the run.
 */
export function consecutiveReattempts(
  current: StepExecutionEntity,
  executionsNewestFirst: readonly StepExecutionEntity[],
): number {
  const run = new ReattemptRun(current);
  for (const execution of executionsNewestFirst) {
    if (run.ended) break;
    run.take(execution);
  }
  return run.count;
}

/**
 * `consecutiveReattempts` over the step's executions loaded page by page (newest first), only as
 * far back as the run goes: a step that polled with `ctx.reattempt()` for months does not load its
 * whole history on each exception.
 */
export async function consecutiveReattemptsPaged(
  current: StepExecutionEntity,
  loadPage: (offset: number, limit: number) => Promise<readonly StepExecutionEntity[]>,
  pageSize = 20,
): Promise<number> {
  const run = new ReattemptRun(current);
  for (let offset = 0; !run.ended; offset += pageSize) {
    const page = await loadPage(offset, pageSize);
    for (const execution of page) {
      if (run.ended) break;
      run.take(execution);
    }
    if (page.length < pageSize) break;
  }
  return run.count;
}

/** The counting rule of `consecutiveReattempts`, one older execution at a time. */
class ReattemptRun {
  count = 0;
  ended: boolean;

  constructor(private readonly current: StepExecutionEntity) {
    this.ended = current.metadata?.reattemptCountReset === true;
  }

  take(execution: StepExecutionEntity): void {
    if (execution.id === this.current.id) return;
    const reason = execution.metadata?.reattemptReason;
    const manual = execution.outcome === 'reattempted' && reason === 'flow_control';
    const counts =
      !manual &&
      (execution.outcome === 'reattempted' ||
        reason === 'exception_policy' ||
        reason === 'precondition');
    if (counts) this.count += 1;
    if (execution.metadata?.reattemptCountReset === true || (!counts && !manual)) this.ended = true;
  }
}

/**
 * Applies the chosen policy. Imperative handlers run with `this` bound to the workflow instance;
 * the verb they call decides, and calling none pauses. A reattempt wait that would make the step
 * due after 9999-12-31 (a backoff strategy that returned `'500000 weeks'`, or grew that far with
 * `maxReattempts: null`) throws `StepConfigurationError`, as a failing handler does: the runner
 * then pauses the workflow, the step's error recorded.
 */
export async function decide(
  policy: ExceptionPolicy,
  error: Error,
  priorReattempts: number,
  workflowInstance: object,
  ctx: StepContextImpl<unknown>,
): Promise<ExceptionDecision> {
  if (policy.handler) {
    const request = await runHandler(policy, error, workflowInstance, ctx);
    const decision = fromRequest(request);
    return { ...decision, report: policy.report !== 'never' && policy.report !== 'terminalOnly' };
  }
  const action = policy.action ?? 'pause';
  if (action !== 'reattempt') {
    return { action, waitMs: null, report: policy.report === 'always' };
  }
  if (policy.maxReattempts !== null && priorReattempts >= policy.maxReattempts) {
    return { action: policy.terminalAction, waitMs: null, report: policy.report !== 'never' };
  }
  return {
    action: 'reattempt',
    waitMs: reattemptWaitMs(policy, priorReattempts + 1),
    report: policy.report === 'always',
  };
}

/**
 * The policy's delay before reattempt number `attempt`, refused when the step would fall due
 * after the last date the library stores (SPEC §16.1). A plain duration was checked when the
 * policy was built, but a strategy's result is known only now.
 */
function reattemptWaitMs(policy: ExceptionPolicy, attempt: number): number | null {
  const { wait } = policy;
  // A strategy function is called once, through a wrapper that keeps its result for the message.
  let strategyResult: unknown;
  const recording = typeof wait === 'function' ? (n: number) => (strategyResult = wait(n)) : wait;
  const waitMs = backoffMs(recording, policy.jitter ?? 0, attempt);
  const problem = waitMs === null ? null : dueTimeProblem(waitMs);
  if (!problem) return waitMs;
  const source =
    typeof wait === 'function'
      ? `backoff strategy ${formatValue(wait)} returned ${formatValue(strategyResult)} for reattempt ${attempt}`
      : `wait ${formatValue(wait)} gives reattempt ${attempt} a delay of ${waitMs} ms`;
  throw new StepConfigurationError(
    `ExceptionPolicy ${source}, which ${problem}. ` +
      'Cap the wait (or set maxReattempts) so that every reattempt falls due by then.',
  );
}

/** The delay of reattempt number `attempt` (1-based), jitter added uniformly in [0, jitter × d). */
export function backoffMs(wait: PolicyWait | null, jitter: number, attempt: number): number | null {
  if (wait === null) return null;
  let base: number;
  if (wait === 'exponential') base = 2 ** attempt * 1000;
  else if (wait === 'polynomial') base = (attempt ** 4 + 2) * 1000;
  else if (typeof wait === 'function')
    base = parseDuration(wait(attempt), 'backoff strategy result');
  else return parseDuration(wait, 'ExceptionPolicy wait');
  return Math.round(base + Math.random() * jitter * base);
}

async function runHandler(
  policy: ExceptionPolicy,
  error: Error,
  workflowInstance: object,
  ctx: StepContextImpl<unknown>,
): Promise<FlowControlRequest | null> {
  try {
    await policy.handler!.call(workflowInstance, error, ctx);
  } catch (thrown) {
    if (!(thrown instanceof FlowControlSignal)) throw thrown;
  }
  return ctx.request;
}

function fromRequest(request: FlowControlRequest | null): Omit<ExceptionDecision, 'report'> {
  switch (request?.action) {
    case 'cancel':
    case 'skip':
    case 'finish':
      return { action: request.action, waitMs: null };
    case 'reattempt':
    case 'suspend':
      return {
        action: 'reattempt',
        waitMs: request.wait === undefined ? null : parseDuration(request.wait, 'reattempt wait'),
      };
    default:
      return { action: 'pause', waitMs: null };
  }
}
