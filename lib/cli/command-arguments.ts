import { WORKFLOW_STATES } from '../common/states';
import type { WorkflowState } from '../interfaces/states.interface';
import type { WorkflowListQuery } from '../ports/workflow.repository';
import { CliUsageError } from './cli-usage.error';

/** Rows `list` shows when `--limit` is not given, and the most it shows. */
export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 1000;

/** `list`'s options as commander hands them over. */
export interface ListOptions {
  state?: string;
  class?: string;
  heroType?: string;
  heroId?: string;
  limit?: string;
}

/** `list`'s options as a repository query: states comma-separated, hero type and id together. */
export function parseListOptions(options: ListOptions): WorkflowListQuery {
  const query: WorkflowListQuery = { limit: parseLimit(options.limit) };
  if (options.state !== undefined) query.states = parseStates(options.state);
  if (options.class !== undefined) query.type = nonEmpty(options.class, '--class');
  if ((options.heroType === undefined) !== (options.heroId === undefined)) {
    throw new CliUsageError(
      '--hero-type and --hero-id go together: a hero is its type and its id (e.g. --hero-type Order --hero-id 42).',
    );
  }
  if (options.heroType !== undefined && options.heroId !== undefined) {
    query.hero = {
      heroType: nonEmpty(options.heroType, '--hero-type'),
      heroId: nonEmpty(options.heroId, '--hero-id'),
    };
  }
  return query;
}

function parseStates(text: string): WorkflowState[] {
  const states = text.split(',').map((state) => state.trim());
  const unknown = states.filter((state) => !WORKFLOW_STATES.includes(state as WorkflowState));
  if (unknown.length > 0 || states.length === 0) {
    throw new CliUsageError(
      `--state '${text}' names no workflow state${unknown.length > 0 ? ` (${unknown.map((state) => `'${state}'`).join(', ')})` : ''}: use ${WORKFLOW_STATES.join(', ')}, several comma-separated.`,
    );
  }
  return [...new Set(states as WorkflowState[])];
}

function parseLimit(text: string | undefined): number {
  if (text === undefined) return DEFAULT_LIST_LIMIT;
  const limit = Number(text);
  if (!/^\d+$/.test(text) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw new CliUsageError(`--limit '${text}' is not a whole number from 1 to ${MAX_LIST_LIMIT}.`);
  }
  return limit;
}

function nonEmpty(text: string, flag: string): string {
  if (text.trim() === '') throw new CliUsageError(`${flag} needs a value.`);
  return text;
}

/** `signal`'s `--payload`: JSON text, parsed (absent: no payload). */
export function parsePayload(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new CliUsageError(
      `--payload is not JSON (${error instanceof Error ? error.message : String(error)}): quote it for your shell, e.g. --payload '{"amount": 100}'.`,
    );
  }
}

/** Refuses more positional arguments than the command takes (commander lets extra ones through). */
export function expectArguments(params: readonly string[], usage: string, count: number): void {
  if (params.length !== count) {
    throw new CliUsageError(
      `expected ${usage}, but got ${params.length === 0 ? 'no arguments' : params.map((param) => `'${param}'`).join(' ')}.`,
    );
  }
}
