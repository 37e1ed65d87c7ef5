import type { StepDefinition } from '../../lib/discovery/step-definition.interface';
import { ShutdownSignal } from '../../lib/resumable/shutdown.signal';
import { StepChain, type JobSlot, type StepChainLimits } from '../../lib/runner/step-chain';

function step(overrides: Partial<StepDefinition> = {}): StepDefinition {
  return {
    name: 'next',
    kind: 'step',
    methodName: 'next',
    waitMs: null,
    waitFor: null,
    timeoutMs: null,
    onTimeout: null,
    skipIf: null,
    policies: null,
    beforeStep: null,
    afterStep: null,
    jobOptions: {},
    maxIterations: null,
    maxRuntimeMs: null,
    ...overrides,
  };
}

const DEFAULT_QUEUE = 'geneva-drive';
const now = () => new Date();

describe('StepChain', () => {
  let shutdown: ShutdownSignal;
  const chain = (slot: Partial<JobSlot> = {}, limits: Partial<StepChainLimits> = {}) =>
    new StepChain(
      { queue: DEFAULT_QUEUE, priority: undefined, ...slot },
      { maxSteps: 25, maxDurationMs: 60_000, ...limits },
      shutdown,
    );

  beforeEach(() => (shutdown = new ShutdownSignal()));
  afterEach(() => jest.useRealTimers());

  it('claims an immediate step on the job’s queue and priority', () => {
    expect(chain().claim(step(), {}, DEFAULT_QUEUE, now())).toBe(true);
    expect(
      chain({ queue: 'fast', priority: 3 }).claim(
        step(),
        { queue: 'fast', priority: 3 },
        DEFAULT_QUEUE,
        now(),
      ),
    ).toBe(true);
  });

  it.each([
    ['due later', step(), {}, new Date(Date.now() + 1_000)],
    ['on another queue', step(), { queue: 'other' }, now()],
    ['with another priority', step(), { priority: 1 }, now()],
    ['waiting for a signal', step({ waitFor: { matches: () => true } }), {}, now()],
    ['removed', step({ kind: 'removed', methodName: null }), {}, now()],
  ])('leaves a step %s to the queue', (_label, next, jobOptions, scheduledFor) => {
    expect(chain().claim(next, jobOptions, DEFAULT_QUEUE, scheduledFor)).toBe(false);
  });

  it('claims at most maxSteps steps', () => {
    const limited = chain({}, { maxSteps: 2 });
    expect([1, 2, 3].map(() => limited.claim(step(), {}, DEFAULT_QUEUE, now()))).toEqual([
      true,
      true,
      false,
    ]);
    expect(chain({}, { maxSteps: 0 }).claim(step(), {}, DEFAULT_QUEUE, now())).toBe(false);
  });

  it('gives the slot back once its time slice is over', () => {
    jest.useFakeTimers({ now: Date.now() });
    const sliced = chain({}, { maxDurationMs: 1_000 });
    expect(sliced.claim(step(), {}, DEFAULT_QUEUE, now())).toBe(true);
    jest.advanceTimersByTime(1_000);
    expect(sliced.claim(step(), {}, DEFAULT_QUEUE, now())).toBe(false);
  });

  it('claims nothing once shutdown began', () => {
    const draining = chain();
    shutdown.raise();
    expect(draining.claim(step(), {}, DEFAULT_QUEUE, now())).toBe(false);
  });
});
