import type { SignalEntity } from '../entities/signal.entity';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import type { GenevaDriveTransport } from '../interfaces/module-options.interface';

/** One row of a workflow's timeline, in creation order. */
export type TimelineEntry =
  | { kind: 'execution'; at: Date; execution: StepExecutionEntity }
  | { kind: 'signal'; at: Date; signal: SignalEntity };

/** A workflow with its executions and signals interleaved. */
export interface WorkflowTimeline {
  workflow: WorkflowEntity;
  timeline: TimelineEntry[];
  /** Step names the workflow has run (suggestions for "resume at"). */
  stepNames: string[];
}

/** One page of the list. */
export interface WorkflowListPage {
  workflows: WorkflowEntity[];
  /** The `after` value of the next page, or null on the last one. */
  next: string | null;
}

/** One queue as the transport reports it. */
export interface QueueOverview {
  queue: string;
  workers: number;
  waiting: number;
  delayed: number;
  active: number;
}

/** The queues page. */
export interface QueuesOverview {
  /** `local`: jobs held in this process (SPEC §16.5); `in-process`: the testing module's queue. */
  transport: GenevaDriveTransport | 'in-process';
  /** Null when the transport answered; else why not. */
  problem: string | null;
  queues: QueueOverview[];
}
