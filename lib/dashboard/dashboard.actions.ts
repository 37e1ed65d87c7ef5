import { Injectable } from '@nestjs/common';
import type { WorkflowEntity } from '../entities/workflow.entity';
import { InvalidArgumentError } from '../errors/invalid-argument.error';
import type { WorkflowSearchQuery } from '../ports/workflow.repository';
import { WorkflowService } from '../service/workflow.service';
import { DashboardAccess } from './dashboard-access';
import type { DashboardAction } from './dashboard-options.interface';
import { DashboardReader } from './dashboard.reader';

/** A write the dashboard offers on one workflow. */
export type WorkflowAction = Exclude<DashboardAction, 'view'>;
/** The writes offered over a filter. */
export type BulkAction = 'pause' | 'resume' | 'skip' | 'cancel';

export const WORKFLOW_ACTIONS: readonly WorkflowAction[] = [
  'pause',
  'resume',
  'resumeAt',
  'skip',
  'cancel',
  'signal',
];
export const BULK_ACTIONS: readonly BulkAction[] = ['pause', 'resume', 'skip', 'cancel'];

/** What a form or JSON body gives a single action. */
export interface ActionInput {
  step?: unknown;
  name?: unknown;
  payload?: unknown;
  key?: unknown;
}

/** How a bulk action went. */
export interface BulkResult {
  done: number;
  refused: Array<{ id: string; message: string }>;
}

const BULK_BATCH = 100;

export function isWorkflowAction(value: string): value is WorkflowAction {
  return (WORKFLOW_ACTIONS as readonly string[]).includes(value);
}

export function isBulkAction(value: string): value is BulkAction {
  return (BULK_ACTIONS as readonly string[]).includes(value);
}

function requiredText(value: unknown, what: string): string {
  const text = typeof value === 'string' ? value.trim() : '';
  if (text === '') throw new InvalidArgumentError(`${what} is required.`);
  return text;
}

/** A payload typed into the form: JSON, or empty for none. */
function payloadOf(value: unknown): unknown {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') return value;
  if (value.trim() === '') return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw new InvalidArgumentError(
      'The signal payload must be JSON (such as {"approved": true}), or empty for none.',
    );
  }
}

/** Every dashboard write, each through `WorkflowService` (its rules, locks and events apply). */
@Injectable()
export class DashboardActions {
  constructor(
    private readonly service: WorkflowService,
    private readonly reader: DashboardReader,
    private readonly access: DashboardAccess,
  ) {}

  async perform(id: string, action: WorkflowAction, input: ActionInput): Promise<void> {
    switch (action) {
      case 'pause':
        await this.service.pause(id);
        return;
      case 'resume':
        await this.service.resume(id);
        return;
      case 'resumeAt':
        await this.service.resumeAt(id, requiredText(input.step, 'The step to resume at'));
        return;
      case 'skip':
        await this.service.skip(id);
        return;
      case 'cancel':
        await this.service.cancel(id);
        return;
      case 'signal': {
        const key =
          typeof input.key === 'string' && input.key.trim() !== '' ? input.key : undefined;
        await this.service.signal(id, requiredText(input.name, 'The signal name'), {
          payload: payloadOf(input.payload),
          idempotencyKey: key,
        });
        return;
      }
    }
  }

  /**
   * Runs the action on every workflow matching the search, a batch at a time in list order; each
   * batch is authorized with its ids first. A workflow the action does not apply to (its state
   * changed meanwhile) is reported, not fatal.
   */
  async bulk(
    request: unknown,
    action: BulkAction,
    search: WorkflowSearchQuery,
  ): Promise<BulkResult> {
    const result: BulkResult = { done: 0, refused: [] };
    let after: WorkflowEntity | undefined;
    for (;;) {
      const batch = await this.reader.idsAfter(search, after, BULK_BATCH);
      if (batch.length === 0) return result;
      await this.access.check(
        request,
        action,
        batch.map((workflow) => workflow.id),
      );
      for (const workflow of batch) {
        try {
          await this.perform(workflow.id, action, {});
          result.done += 1;
        } catch (error) {
          result.refused.push({
            id: workflow.id,
            message: error instanceof Error ? error.message : String(error),
          });
        }
      }
      after = batch.at(-1);
    }
  }
}
