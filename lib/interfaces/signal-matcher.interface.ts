import type { SignalEntity } from '../entities/signal.entity';
import type { WorkflowContext } from './workflow-context.interface';

/** Anything with `matches(signal)` can be a `waitFor` target. */
export interface SignalMatcherLike {
  /** `ctx` carries the workflow and its loaded hero; implementations may ignore it. */
  matches(signal: SignalEntity, ctx: WorkflowContext): boolean;
}
