import { SignalMatcher } from '../../lib';
import { StepCollection } from '../../lib/discovery/step-collection';
import type { StepDefinition } from '../../lib/discovery/step-definition.interface';
import type { WorkflowDefinition } from '../../lib/discovery/workflow-definition.interface';
import type { SignalMatcherLike } from '../../lib/interfaces/signal-matcher.interface';
import { signalWakeTargets } from '../../lib/signals/signal-wake-targets';

/** A workflow definition with just what signalWakeTargets reads: names and matchers. */
function definition(
  name: string,
  steps: Record<string, SignalMatcherLike | null>,
): WorkflowDefinition {
  const definitions = Object.entries(steps).map(
    ([stepName, waitFor]) =>
      ({ name: stepName, kind: 'step', waitFor }) as unknown as StepDefinition,
  );
  return { name, steps: new StepCollection(definitions) } as unknown as WorkflowDefinition;
}

const custom: SignalMatcherLike = { matches: () => true };

describe('signalWakeTargets', () => {
  const definitions = [
    definition('Payment', {
      prepare: null,
      capture: new SignalMatcher('paid'),
      refund: new SignalMatcher('refunded'),
    }),
    definition('BigPayment', {
      capture: new SignalMatcher<{ amount: number }>('paid', (payload) => payload.amount > 100),
      audit: new SignalMatcher('refunded', () => true),
    }),
    definition('Custom', { listen: custom }),
  ];

  it('a plain matcher of the name wakes its step; a predicate of that name or a custom matcher must run', () => {
    expect(signalWakeTargets(definitions, 'paid')).toEqual({
      wakes: [{ workflowType: 'Payment', stepName: 'capture' }],
      undecided: [
        { workflowType: 'BigPayment', stepName: 'capture' },
        { workflowType: 'Custom', stepName: 'listen' },
      ],
    });
  });

  it('matchers of other names, predicates included, never count', () => {
    expect(signalWakeTargets(definitions.slice(0, 2), 'shipped')).toEqual({
      wakes: [],
      undecided: [],
    });
    expect(signalWakeTargets(definitions, 'refunded')).toEqual({
      wakes: [{ workflowType: 'Payment', stepName: 'refund' }],
      undecided: [
        { workflowType: 'BigPayment', stepName: 'audit' },
        { workflowType: 'Custom', stepName: 'listen' },
      ],
    });
  });

  it('names are compared exactly', () => {
    expect(signalWakeTargets(definitions.slice(0, 1), 'Paid').wakes).toEqual([]);
  });
});
