import { SignalMatcher } from '../api/signal-matcher';
import type { WorkflowDefinition } from '../discovery/workflow-definition.interface';
import type { SignalStepRef } from '../ports/workflow.repository';

/** The parked steps a delivery of one signal name may wake, as far as names decide it. */
export interface SignalWakeTargets {
  /** Steps whose matcher accepts every signal of the name. */
  wakes: SignalStepRef[];
  /** Steps whose matcher must run to tell: a predicate on the name, or a custom matcher. */
  undecided: SignalStepRef[];
}

/**
 * Sorts every `waitFor` step of `definitions` by what a signal called `name` means to it: a plain
 * `SignalMatcher` of that name wakes it, one of another name never does, a predicate of that name
 * or any other matcher implementation needs its code run.
 */
export function signalWakeTargets(
  definitions: readonly WorkflowDefinition[],
  name: string,
): SignalWakeTargets {
  const targets: SignalWakeTargets = { wakes: [], undecided: [] };
  for (const definition of definitions) {
    for (const step of definition.steps.ordered) {
      const matcher = step.waitFor;
      if (!matcher) continue;
      const ref = { workflowType: definition.name, stepName: step.name };
      if (!(matcher instanceof SignalMatcher)) targets.undecided.push(ref);
      else if (matcher.name !== name) continue;
      else if (matcher.readsContext) targets.undecided.push(ref);
      else targets.wakes.push(ref);
    }
  }
  return targets;
}
