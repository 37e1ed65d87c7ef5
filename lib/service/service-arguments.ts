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

/** The most bytes of serialized JSON a workflow's `context` takes (SPEC §16.6). */
export const MAX_CONTEXT_BYTES = 4096;

/**
 * `start()` context: a plain object of JSON data of at most MAX_CONTEXT_BYTES serialized, or
 * nothing (null). Every step sees it as `ctx.context`.
 */
export function startContext(context: unknown, method: string): Record<string, unknown> | null {
  if (context === undefined || context === null) return null;
  if (!isPlainObject(context)) {
    throw new InvalidArgumentError(
      `${method} context must be a plain object ({ key: value }), but was ${describeValue(context)}.`,
    );
  }
  const problem = jsonDataProblem(context, 'context');
  if (problem) throw new InvalidArgumentError(`${method} ${problem}.`);
  checkContextSize(context, method);
  return Object.keys(context).length > 0 ? context : null;
}

/** Refuses a context over MAX_CONTEXT_BYTES of JSON. */
export function checkContextSize(context: Record<string, unknown>, method: string): void {
  const bytes = Buffer.byteLength(JSON.stringify(context), 'utf8');
  if (bytes > MAX_CONTEXT_BYTES) {
    throw new InvalidArgumentError(
      `${method} context is ${bytes} bytes of JSON, over the limit of ${MAX_CONTEXT_BYTES} bytes: keep it to small values (ids, a locale), and store bigger data on the hero or in metadata.`,
    );
  }
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
