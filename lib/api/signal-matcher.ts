import { StepConfigurationError } from '../errors/step-configuration.error';
import type { SignalEntity } from '../entities/signal.entity';
import type { SignalMatcherLike } from '../interfaces/signal-matcher.interface';
import type { WorkflowContext } from '../interfaces/workflow-context.interface';

/**
 * Matches signals by name and, optionally, by a predicate over the payload that sees the workflow
 * and its hero. Reusable as a constant across steps and workflows.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export class SignalMatcher<Payload = any, Hero = any> implements SignalMatcherLike {
  readonly name: string;

  constructor(
    name: string,
    private readonly predicate?: (payload: Payload, ctx: WorkflowContext<Hero>) => boolean,
  ) {
    if (typeof name !== 'string' || name.trim() === '') {
      throw new StepConfigurationError(
        "SignalMatcher needs a non-blank signal name: new SignalMatcher('payment_confirmed', predicate?).",
      );
    }
    if (predicate !== undefined && typeof predicate !== 'function') {
      throw new StepConfigurationError(
        `SignalMatcher '${name}': the predicate must be a function (payload, ctx) => boolean.`,
      );
    }
    this.name = name;
  }

  /** @internal Whether matching reads the workflow context (a delivery loads the hero only then). */
  get readsContext(): boolean {
    return this.predicate !== undefined;
  }

  matches(signal: SignalEntity, ctx?: WorkflowContext<Hero>): boolean {
    if (signal.name !== this.name) return false;
    if (!this.predicate) return true;
    return Boolean(this.predicate(signal.payload as Payload, ctx as WorkflowContext<Hero>));
  }
}

/**
 * Whether `matcher` may read the context it is given: a SignalMatcher only with a predicate, any
 * other implementation always.
 */
export function matcherReadsContext(matcher: SignalMatcherLike): boolean {
  return !(matcher instanceof SignalMatcher) || matcher.readsContext;
}
