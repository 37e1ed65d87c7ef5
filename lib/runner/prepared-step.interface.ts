import type { SignalEntity } from '../entities/signal.entity';
import type { StepDefinition } from '../discovery/step-definition.interface';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import type { StepExecutionEntity } from '../entities/step-execution.entity';
import type { WorkflowEntity } from '../entities/workflow.entity';
import type { TaggedLogger } from '../observability/tagged-logger';
import type { FlowControlRequest } from './flow-control';
import type { StepContextImpl } from './step-context';

/** Everything the prepare phase hands to the run and finalize phases. */
export interface PreparedStep {
  workflow: WorkflowEntity;
  execution: StepExecutionEntity;
  definition: WorkflowDefinition;
  step: StepDefinition;
  hero: object | null;
  /** The signal a `waitFor` step was woken with (or claimed at its gate). */
  receivedSignal: SignalEntity | null;
  logger: TaggedLogger;
}

/** How the step body ended. */
export type StepResult =
  | { kind: 'completed' }
  | { kind: 'flow'; request: FlowControlRequest; swallowedError: Error | null }
  | { kind: 'error'; error: Error }
  | { kind: 'interrupted'; reason: string; waitMs: number | null };

/** How the runner runs an execution; the test helpers turn interruption off or cap iterations. */
export interface RunOptions {
  /** false: resumable steps run to the end (only `skipTo` and `suspend` still interrupt). */
  interruptible: boolean;
  /** Overrides the step's `maxIterations` for this run. */
  maxIterations: number | null;
}

/** The run phase's result with the context the step used. */
export interface StepRun {
  result: StepResult;
  ctx: StepContextImpl<unknown>;
}
