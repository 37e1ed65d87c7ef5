import { formatValue, isDuration, parseDurationOrNull } from '../common/duration';
import { dueTimeProblem, storedStringProblem } from '../common/input-guards';
import { validateStepJobOptions } from '../common/step-job-options.validator';
import type { RecordedStep } from '../decorators/recorded-step.interface';
import { StepConfigurationError } from '../errors/step-configuration.error';
import type { ExceptionAction } from '../interfaces/exception-policy.interface';
import type { SignalMatcherLike } from '../interfaces/signal-matcher.interface';
import type { ResumableStepOptions, SkipIfOption } from '../interfaces/workflow-options.interface';
import { ExceptionPolicy } from '../api/exception-policy';
import { SignalMatcher } from '../api/signal-matcher';
import type { StepDefinition } from './step-definition.interface';

const STEP_OPTION_KEYS = [
  'wait',
  'waitFor',
  'skipIf',
  'onException',
  'maxReattempts',
  'terminalAction',
  'beforeStep',
  'afterStep',
  'jobOptions',
  'repeat',
  'timeout',
  'onTimeout',
];
const RESUMABLE_OPTION_KEYS = [...STEP_OPTION_KEYS, 'maxIterations', 'maxRuntime'];
const ACTIONS: readonly ExceptionAction[] = ['pause', 'cancel', 'reattempt', 'skip'];

/**
 * Turns the recorded steps of one workflow class into validated definitions, in declaration order.
 * Every problem throws `StepConfigurationError` naming the workflow, the step and the fix.
 */
export function buildStepDefinitions(
  workflowName: string,
  prototype: object,
  recorded: readonly RecordedStep[],
): StepDefinition[] {
  const definitions: StepDefinition[] = [];
  for (const step of recorded) {
    const baseName = step.name ?? step.propertyKey;
    const fail = (problem: string): StepConfigurationError =>
      new StepConfigurationError(`Workflow ${workflowName}, step '${baseName}': ${problem}`);
    for (const definition of buildOne(step, baseName, prototype, fail)) {
      // Step names are stored in step_name / next_step_name (varchar(255) on MariaDB/MySQL).
      const nameProblem = storedStringProblem(definition.name);
      if (nameProblem) throw fail(`the step name ${nameProblem}.`);
      if (definitions.some((existing) => existing.name === definition.name)) {
        throw new StepConfigurationError(
          `Workflow ${workflowName}, step '${definition.name}': is already defined in ${workflowName}. ` +
            'Give the step another name; to change a parent step body, override the method without a decorator.',
        );
      }
      for (const [option, target] of [
        ['beforeStep', definition.beforeStep],
        ['afterStep', definition.afterStep],
      ] as const) {
        if (target !== null && !definitions.some((existing) => existing.name === target)) {
          throw fail(
            `references non-existent step '${target}' in ${option}. You can only reference steps declared before this one.`,
          );
        }
      }
      definitions.push(definition);
    }
  }
  return definitions;
}

function buildOne(
  step: RecordedStep,
  name: string,
  prototype: object,
  fail: (problem: string) => StepConfigurationError,
): StepDefinition[] {
  if (step.kind === 'removed') {
    if (typeof name !== 'string' || name.trim() === '')
      throw fail('the step name must not be blank.');
    return [
      {
        name,
        kind: 'removed',
        methodName: null,
        waitMs: null,
        waitFor: null,
        timeoutMs: null,
        onTimeout: null,
        skipIf: null,
        policies: null,
        beforeStep: null,
        afterStep: null,
        jobOptions: {},
        maxIterations: null,
        maxRuntimeMs: null,
      },
    ];
  }
  const options: ResumableStepOptions = step.options;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw fail(`options must be an object, but were ${formatValue(options)}.`);
  }
  const allowed = step.kind === 'resumable' ? RESUMABLE_OPTION_KEYS : STEP_OPTION_KEYS;
  const unknown = Object.keys(options).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw fail(`has unknown option(s) ${unknown.join(', ')}. Allowed: ${allowed.join(', ')}.`);
  }
  if (typeof (prototype as Record<string, unknown>)[step.propertyKey] !== 'function') {
    throw fail(`decorates '${step.propertyKey}', which is not a method.`);
  }
  if (typeof name !== 'string' || name.trim() === '')
    throw fail('the step name must not be blank.');
  const waitMs = validateWait(options.wait, fail);
  const waitFor = validateWaitFor(options.waitFor, fail);
  const { timeoutMs, onTimeout } = validateTimeout(options, waitFor !== null, fail);
  const skipIf = validateSkipIf(options.skipIf, prototype, fail);
  const policies = validateOnException(options, fail);
  if (options.beforeStep !== undefined && options.afterStep !== undefined) {
    throw fail('cannot specify both beforeStep and afterStep; choose one.');
  }
  for (const key of ['beforeStep', 'afterStep'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw fail(`${key} must be the name of an earlier step, but was ${formatValue(value)}.`);
    }
  }
  let jobOptions;
  try {
    jobOptions = validateStepJobOptions(options.jobOptions, 'jobOptions');
  } catch (error) {
    throw fail((error as Error).message);
  }
  const maxIterations = options.maxIterations ?? null;
  if (maxIterations !== null && (!Number.isInteger(maxIterations) || maxIterations <= 0)) {
    throw fail(
      `has invalid maxIterations ${formatValue(maxIterations)}: must be a positive integer.`,
    );
  }
  let maxRuntimeMs: number | null = null;
  if (options.maxRuntime !== undefined) {
    maxRuntimeMs = parseDurationOrNull(options.maxRuntime);
    if (maxRuntimeMs === null || maxRuntimeMs <= 0) {
      throw fail(
        `has invalid maxRuntime ${formatValue(options.maxRuntime)}: must be a positive duration such as '5m'.`,
      );
    }
  }
  const base: StepDefinition = {
    name,
    kind: step.kind,
    methodName: step.propertyKey,
    waitMs,
    waitFor,
    timeoutMs,
    onTimeout,
    skipIf,
    policies,
    beforeStep: options.beforeStep ?? null,
    afterStep: options.afterStep ?? null,
    jobOptions,
    maxIterations,
    maxRuntimeMs,
  };
  if (options.repeat === undefined) return [base];
  return expandRepeat(base, options.repeat, fail);
}

function validateWait(wait: unknown, fail: (p: string) => StepConfigurationError): number | null {
  if (wait === undefined) return null;
  const isMatcherObject = typeof wait === 'object' && wait !== null && 'matches' in wait;
  if (
    isMatcherObject ||
    (typeof wait === 'string' && (!isDuration(wait) || /^\d+(\.\d+)?$/.test(wait.trim())))
  ) {
    throw fail(
      `has wait: ${formatValue(wait)} — wait takes a duration; to wait for a signal, use waitFor.`,
    );
  }
  if (typeof wait === 'number' && !(Number.isFinite(wait) && wait >= 0)) {
    throw fail(
      `has invalid wait ${formatValue(wait)}: must be a finite number of milliseconds >= 0.`,
    );
  }
  const ms = parseDurationOrNull(wait);
  if (ms === null) {
    throw fail(
      `has invalid wait ${formatValue(wait)}: use milliseconds or a string such as '30s' or '2 days'.`,
    );
  }
  checkDueTime('wait', wait, ms, fail);
  return ms;
}

/**
 * A step's delay (`wait`, `repeat.every`) becomes its `scheduled_for`, a timestamp the library
 * keeps within years 1–9999 (SPEC §16.1): a delay that ends after 9999-12-31 (`'500000 weeks'`)
 * fails boot here instead of being stored as year 11609 by PostgreSQL or refused by MariaDB when
 * the step is scheduled.
 */
function checkDueTime(
  option: string,
  value: unknown,
  ms: number,
  fail: (p: string) => StepConfigurationError,
): void {
  const problem = dueTimeProblem(ms);
  if (problem) {
    throw fail(`has ${option} ${formatValue(value)}, which ${problem}. Use a shorter ${option}.`);
  }
}

function validateWaitFor(
  waitFor: unknown,
  fail: (p: string) => StepConfigurationError,
): SignalMatcherLike | null {
  if (waitFor === undefined) return null;
  if (
    typeof waitFor === 'number' ||
    waitFor instanceof Date ||
    (typeof waitFor === 'string' && isDuration(waitFor))
  ) {
    throw fail(
      `has waitFor: ${formatValue(waitFor)} — waitFor takes a signal name or matcher; to delay the step, use wait.`,
    );
  }
  if (typeof waitFor === 'string') {
    if (waitFor.trim() === '') throw fail('has a blank waitFor signal name.');
    const problem = storedStringProblem(waitFor);
    // signal() refuses such a name, so the step would wait forever.
    if (problem) throw fail(`has a waitFor signal name that no signal can carry: it ${problem}.`);
    return new SignalMatcher(waitFor);
  }
  if (
    typeof waitFor === 'object' &&
    waitFor !== null &&
    typeof (waitFor as SignalMatcherLike).matches === 'function'
  ) {
    const matcherName = waitFor instanceof SignalMatcher ? waitFor.name : undefined;
    const problem = matcherName === undefined ? null : storedStringProblem(matcherName);
    if (problem) {
      throw fail(`has a waitFor SignalMatcher whose name no signal can carry: it ${problem}.`);
    }
    return waitFor as SignalMatcherLike;
  }
  throw fail(
    `has invalid waitFor ${formatValue(waitFor)}: must be a signal name, a SignalMatcher, or an object with matches(signal).`,
  );
}

/** `timeout` bounds a signal wait (so needs `waitFor`); `onTimeout` needs a `timeout`. */
function validateTimeout(
  options: ResumableStepOptions,
  waitsForSignal: boolean,
  fail: (p: string) => StepConfigurationError,
): { timeoutMs: number | null; onTimeout: ExceptionPolicy | null } {
  const { timeout, onTimeout } = options;
  if (timeout === undefined) {
    if (onTimeout !== undefined) {
      throw fail(
        "has onTimeout but no timeout; add timeout (such as timeout: '3d') or drop onTimeout.",
      );
    }
    return { timeoutMs: null, onTimeout: null };
  }
  if (!waitsForSignal) {
    throw fail(
      `has timeout ${formatValue(timeout)} but no waitFor: a timeout bounds a wait for a signal. ` +
        'Add waitFor, or use wait to delay the step.',
    );
  }
  const timeoutMs = parseDurationOrNull(timeout);
  if (timeoutMs === null || timeoutMs <= 0) {
    throw fail(
      `has invalid timeout ${formatValue(timeout)}: must be a positive duration such as '30m' or '3 days'.`,
    );
  }
  checkDueTime('timeout', timeout, timeoutMs, fail);
  if (onTimeout === undefined) return { timeoutMs, onTimeout: null };
  if (onTimeout instanceof ExceptionPolicy) return { timeoutMs, onTimeout };
  if (typeof onTimeout === 'string' && ACTIONS.includes(onTimeout)) {
    return { timeoutMs, onTimeout: new ExceptionPolicy(onTimeout) };
  }
  throw fail(
    `has invalid onTimeout ${formatValue(onTimeout)}: must be one of ${ACTIONS.join(', ')} or an ExceptionPolicy.`,
  );
}

function validateSkipIf(
  skipIf: unknown,
  prototype: object,
  fail: (p: string) => StepConfigurationError,
): SkipIfOption | null {
  if (skipIf === undefined || skipIf === null) return null;
  if (typeof skipIf === 'boolean' || typeof skipIf === 'function') return skipIf as SkipIfOption;
  if (typeof skipIf === 'string') {
    if (typeof (prototype as Record<string, unknown>)[skipIf] !== 'function') {
      throw fail(
        `has skipIf '${skipIf}', but the workflow has no method of that name. Add the method or pass a predicate.`,
      );
    }
    return skipIf;
  }
  throw fail(
    `has invalid skipIf ${formatValue(skipIf)}: must be a boolean, a predicate (ctx) => boolean, or a method name.`,
  );
}

function validateOnException(
  options: ResumableStepOptions,
  fail: (p: string) => StepConfigurationError,
): ExceptionPolicy[] | null {
  const { onException } = options;
  const hasLimitOptions = 'maxReattempts' in options || options.terminalAction !== undefined;
  if (hasLimitOptions && onException !== 'reattempt') {
    const which = 'maxReattempts' in options ? 'maxReattempts' : 'terminalAction';
    throw fail(
      onException instanceof ExceptionPolicy || Array.isArray(onException)
        ? `has ${which} beside an ExceptionPolicy or array; set ${which} on the ExceptionPolicy instead.`
        : `has ${which} but onException is not 'reattempt'; use onException: 'reattempt' or drop ${which}.`,
    );
  }
  if (onException === undefined) return null;
  try {
    if (typeof onException === 'string') {
      if (!ACTIONS.includes(onException)) {
        throw new Error(
          `has invalid onException ${formatValue(onException)}: must be one of ${ACTIONS.join(', ')}, an ExceptionPolicy, or an array of them.`,
        );
      }
      const policyOptions =
        onException === 'reattempt'
          ? {
              ...('maxReattempts' in options ? { maxReattempts: options.maxReattempts } : {}),
              ...(options.terminalAction !== undefined
                ? { terminalAction: options.terminalAction }
                : {}),
            }
          : {};
      return [new ExceptionPolicy(onException, policyOptions)];
    }
  } catch (error) {
    throw fail((error as Error).message.replace(/^ExceptionPolicy /, ''));
  }
  if (onException instanceof ExceptionPolicy) return [onException];
  if (Array.isArray(onException)) {
    if (onException.length === 0) {
      throw fail(
        'onException is an empty array; list at least one ExceptionPolicy, or drop onException.',
      );
    }
    const bad: unknown = onException.find((element) => !(element instanceof ExceptionPolicy));
    if (bad !== undefined) {
      throw fail(
        `has an invalid onException array element ${formatValue(bad)}: arrays hold ExceptionPolicy instances only.`,
      );
    }
    return [...onException];
  }
  throw fail(
    `has invalid onException ${formatValue(onException)}: must be 'pause', 'cancel', 'reattempt', 'skip', an ExceptionPolicy, or an array of ExceptionPolicy.`,
  );
}

function expandRepeat(
  base: StepDefinition,
  repeat: unknown,
  fail: (p: string) => StepConfigurationError,
): StepDefinition[] {
  const { times, every } = (repeat ?? {}) as { times?: unknown; every?: unknown };
  if (
    typeof repeat !== 'object' ||
    repeat === null ||
    Object.keys(repeat).some((key) => key !== 'times' && key !== 'every')
  ) {
    throw fail(
      `has invalid repeat ${formatValue(repeat)}: use { times: number, every?: Duration }.`,
    );
  }
  if (!Number.isInteger(times) || (times as number) <= 0) {
    throw fail(`has invalid repeat.times ${formatValue(times)}: must be a positive integer.`);
  }
  const everyMs = every === undefined ? null : parseDurationOrNull(every);
  if (every !== undefined && everyMs === null) {
    throw fail(`has invalid repeat.every ${formatValue(every)}: must be a duration such as '10m'.`);
  }
  if (everyMs !== null) checkDueTime('repeat.every', every, everyMs, fail);
  return Array.from({ length: times as number }, (_, index) => ({
    ...base,
    name: `${base.name}_${index + 1}`,
    waitMs: index === 0 ? base.waitMs : everyMs,
    beforeStep: index === 0 ? base.beforeStep : null,
    afterStep: index === 0 ? base.afterStep : `${base.name}_${index}`,
  }));
}
