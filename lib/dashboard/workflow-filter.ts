import { parseDurationOrNull } from '../common/duration';
import { describeValue } from '../common/input-guards';
import { WORKFLOW_STATES } from '../common/states';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import type { WorkflowState } from '../interfaces/states.interface';
import type { WorkflowPageStart, WorkflowSearchQuery } from '../ports/workflow.repository';

/** The list filter as the query string carries it (every field optional text). */
export interface WorkflowFilterFields {
  state?: string[];
  class?: string;
  heroType?: string;
  heroId?: string;
  step?: string;
  waitingLongerThan?: string;
  createdFrom?: string;
  createdTo?: string;
  q?: string;
}

/** A parsed filter: the fields to show back in the form, the search to run. */
export interface WorkflowFilter {
  fields: WorkflowFilterFields;
  search: WorkflowSearchQuery;
}

const TEXT_FIELDS = [
  'class',
  'heroType',
  'heroId',
  'step',
  'waitingLongerThan',
  'createdFrom',
  'createdTo',
  'q',
] as const;
const MAX_TEXT = 500;

/** One query-string value as text: the first of repeated ones, blank as absent. */
function textOf(value: unknown, key: string): string | undefined {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  if (first === undefined || first === null) return undefined;
  if (typeof first !== 'string') {
    throw new InvalidArgumentError(`Filter ${key} must be text, but was ${describeValue(first)}.`);
  }
  const trimmed = first.trim();
  if (trimmed.length > MAX_TEXT) {
    throw new InvalidArgumentError(`Filter ${key} is longer than ${MAX_TEXT} characters.`);
  }
  return trimmed === '' ? undefined : trimmed;
}

function dateOf(value: string, key: string): Date {
  const date = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(date.getTime())) {
    throw new InvalidArgumentError(
      `Filter ${key} must be a date such as 2026-01-31 or 2026-01-31T12:00:00Z, but was ${describeValue(value)}.`,
    );
  }
  return date;
}

/**
 * The list filter from a query string or a form body (`state` may repeat). A blank field is no
 * filter; anything that cannot be a filter (unknown state, bad duration or date) is an
 * `InvalidArgumentError` naming the field and the expected form. `createdTo` as a bare date
 * includes that whole day.
 */
export function parseWorkflowFilter(
  input: Readonly<Record<string, unknown>>,
  now: number = Date.now(),
): WorkflowFilter {
  const fields: WorkflowFilterFields = {};
  for (const key of TEXT_FIELDS) {
    const value = textOf(input[key], key);
    if (value !== undefined) fields[key] = value;
  }
  const rawStates: unknown[] = [input.state]
    .flat()
    .filter((value) => value !== undefined && value !== '');
  const states: WorkflowState[] = [];
  for (const state of rawStates) {
    if (typeof state !== 'string' || !WORKFLOW_STATES.includes(state as WorkflowState)) {
      throw new InvalidArgumentError(
        `Filter state must be one of ${WORKFLOW_STATES.join(', ')}, but was ${describeValue(state)}.`,
      );
    }
    if (!states.includes(state as WorkflowState)) states.push(state as WorkflowState);
  }
  if (states.length > 0) fields.state = states;

  const search: WorkflowSearchQuery = {};
  if (states.length > 0) search.states = states;
  if (fields.class !== undefined) search.types = [fields.class];
  if (fields.heroType !== undefined) search.heroType = fields.heroType;
  if (fields.heroId !== undefined) search.heroId = fields.heroId;
  if (fields.step !== undefined) search.stepName = fields.step;
  if (fields.q !== undefined) search.text = fields.q;
  if (fields.waitingLongerThan !== undefined) {
    const ms = parseDurationOrNull(fields.waitingLongerThan);
    if (ms === null) {
      throw new InvalidArgumentError(
        `Filter waitingLongerThan must be a duration such as 30s, 15m, 2h or 3d, but was ${describeValue(fields.waitingLongerThan)}.`,
      );
    }
    search.waitingSinceBefore = new Date(now - ms);
  }
  if (fields.createdFrom !== undefined) {
    search.createdFrom = dateOf(fields.createdFrom, 'createdFrom');
  }
  if (fields.createdTo !== undefined) {
    const to = dateOf(fields.createdTo, 'createdTo');
    const wholeDay = /^\d{4}-\d{2}-\d{2}$/.test(fields.createdTo);
    search.createdBefore = wholeDay ? new Date(to.getTime() + 86_400_000) : to;
  }
  if (search.createdFrom && search.createdBefore && search.createdFrom >= search.createdBefore) {
    throw new InvalidArgumentError(
      'Filter createdFrom must be before createdTo: swap the two dates.',
    );
  }
  return { fields, search };
}

/** The filter as query-string pairs (links to the next page, bulk forms). */
export function filterPairs(fields: WorkflowFilterFields): Array<[string, string]> {
  const pairs: Array<[string, string]> = (fields.state ?? []).map((state) => ['state', state]);
  for (const key of TEXT_FIELDS) {
    const value = fields[key];
    if (value !== undefined) pairs.push([key, value]);
  }
  return pairs;
}

/** Where the next page starts, as the opaque `after` query value. */
export function encodePageStart(start: WorkflowPageStart): string {
  return Buffer.from(`${start.createdAt.toISOString()}|${start.id}`).toString('base64url');
}

/** The `after` query value back; a value this dashboard did not write is an InvalidArgumentError. */
export function decodePageStart(value: unknown): WorkflowPageStart | undefined {
  const text = textOf(value, 'after');
  if (text === undefined) return undefined;
  const [at, id, ...rest] = Buffer.from(text, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(at ?? '');
  if (rest.length > 0 || !id || Number.isNaN(createdAt.getTime())) {
    throw new InvalidArgumentError(
      'The page link is not one this dashboard wrote: start again from the first page.',
    );
  }
  return { createdAt, id };
}
