import type { Type } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { WorkflowEntity } from '../entities/workflow.entity';
import type { StepJobOptions } from './job-options.interface';
import type { WorkflowState } from './states.interface';

/** A `@Workflow` class or its registered name. */
export type WorkflowRef = Type<object> | string;
/** A `WorkflowEntity` or its id. */
export type WorkflowLike = WorkflowEntity | string;

export interface StartOptions {
  hero?: object | null;
  allowMultiple?: boolean;
  metadata?: Record<string, unknown>;
  stepJobOptions?: StepJobOptions;
  manager?: EntityManager;
  /**
   * 0.2 (SPEC §16.6): a small plain object of JSON data (at most 4 KB serialized) that every step
   * sees as `ctx.context`; default none (`{}`). Needs the workflow-context migration.
   */
  context?: Record<string, unknown>;
}

export interface ListFilter {
  workflow?: WorkflowRef;
  state?: WorkflowState | WorkflowState[];
  hero?: object;
  ongoing?: boolean;
  limit?: number;
  offset?: number;
}

export interface SignalOptions {
  payload?: unknown;
  idempotencyKey?: string;
  manager?: EntityManager;
}

export interface HousekeepingResult {
  workflowsCleanedUp: number;
  stepExecutionsCleanedUp: number;
  signalsCleanedUp: number;
  stuckInProgressRecovered: number;
  stuckScheduledRecovered: number;
  /** Pending signals older than `signalRetention`, deleted (0 when it is null). */
  signalsExpired: number;
}
