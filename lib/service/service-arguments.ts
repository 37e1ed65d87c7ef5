import { describeValue, isPlainObject, jsonDataProblem } from '../common/input-guards';
import { WORKFLOW_STATES } from '../common/states';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import type { ListFilter } from '../interfaces/workflow-service.interface';

/*
 * Argument checks of WorkflowService's start() and list(): each rejects with an
 * InvalidArgumentError naming the option and what it must be, before anything is written.
 */

/**
 * `start()` metadata: a plain object of JSON data (or nothing). `stepJobOptions` is reserved for
 * the validated instance job options, which the `stepJobOptions` option sets.
 */
export function startMetadata(metadata: unknown): Record<string, unknown> {
  if (metadata === undefined || metadata === null) return {};
  if (!isPlainObject(metadata)) {
    throw new InvalidArgumentError(
      `start() metadata must be a plain object ({ key: value }), but was ${describeValue(metadata)}.`,
    );
  }
  if ('stepJobOptions' in metadata) {
    throw new InvalidArgumentError(
      'start() metadata.stepJobOptions is reserved for instance job options: pass them as start(workflow, { stepJobOptions }) so they are validated.',
    );
  }
  const problem = jsonDataProblem(metadata, 'metadata');
  if (problem) throw new InvalidArgumentError(`start() ${problem}.`);
  return metadata;
}

export function validateListFilter(filter: ListFilter): void {
  const { state, ongoing, limit, offset } = filter;
  const states = state === undefined ? [] : [state].flat();
  if (
    state !== undefined &&
    ((Array.isArray(state) && state.length === 0) ||
      states.some((s) => !WORKFLOW_STATES.includes(s)))
  ) {
    throw new InvalidArgumentError(
      `list() state must be one of ${WORKFLOW_STATES.join(', ')}, or a non-empty array of them, but was ${describeValue(
        Array.isArray(state) ? (states.find((s) => !WORKFLOW_STATES.includes(s)) ?? state) : state,
      )}.`,
    );
  }
  if (ongoing !== undefined && typeof ongoing !== 'boolean') {
    throw new InvalidArgumentError(
      `list() ongoing must be a boolean, but was ${describeValue(ongoing)}.`,
    );
  }
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit > 0)) {
    throw new InvalidArgumentError(
      `list() limit must be a positive integer, but was ${describeValue(limit)}.`,
    );
  }
  if (offset !== undefined && !(Number.isSafeInteger(offset) && offset >= 0)) {
    throw new InvalidArgumentError(
      `list() offset must be an integer >= 0, but was ${describeValue(offset)}.`,
    );
  }
}

export function rejectUnknownKeys(options: object, allowed: string[], method: string): void {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new InvalidArgumentError(
      `${method} expects an options object ({ ${allowed.join(', ')} }), but got ${describeValue(options)}.`,
    );
  }
  const unknown = Object.keys(options).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(
      `${method} got unknown option(s) ${unknown.join(', ')}. Allowed: ${allowed.join(', ')}.`,
    );
  }
}
