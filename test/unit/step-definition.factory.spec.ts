import type { Type } from '@nestjs/common';
import {
  CancelIf,
  ExceptionPolicy,
  RemovedStep,
  ResumableStep,
  SignalMatcher,
  SignalEntity,
  Step,
  StepConfigurationError,
  Workflow,
} from '../../lib';
import type { ResumableStepOptions, StepOptions } from '../../lib';
import type { RecordedStep } from '../../lib/decorators/recorded-step.interface';
import { StepCollection } from '../../lib/discovery/step-collection';
import { buildStepDefinitions } from '../../lib/discovery/step-definition.factory';
import type { StepDefinition } from '../../lib/discovery/step-definition.interface';
import { WorkflowMetadataAccessor } from '../../lib/discovery/workflow-metadata.accessor';

const accessor = new WorkflowMetadataAccessor();

function build(cls: Type<object>): StepDefinition[] {
  return buildStepDefinitions(cls.name, cls.prototype as object, accessor.getRecordedSteps(cls));
}

function names(cls: Type<object>): string[] {
  return build(cls).map((step) => step.name);
}

/** Options the public types forbid, as a JavaScript user or a typo could pass them. */
function untyped(options: Record<string, unknown>): ResumableStepOptions {
  return options;
}

/**
 * Building `cls` throws a StepConfigurationError whose message names the workflow, the step and
 * matches every pattern.
 */
function expectStepError(cls: Type<object>, stepName: string, ...patterns: RegExp[]): void {
  let thrown: unknown;
  try {
    build(cls);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(StepConfigurationError);
  const message = (thrown as Error).message;
  expect(message).toContain(`Workflow ${cls.name}`);
  expect(message).toContain(`step '${stepName}'`);
  for (const pattern of patterns) expect(message).toMatch(pattern);
}

/** A class with one step `s` carrying `options`. */
function oneStep(options: StepOptions | ResumableStepOptions, resumable = false): Type<object> {
  const decorator = resumable ? ResumableStep(options) : Step(options);
  @Workflow()
  class OneStepWorkflow {
    first(): void {}
    s(): void {}
  }
  Step()(OneStepWorkflow.prototype, 'first', {});
  decorator(OneStepWorkflow.prototype, 's', {});
  return OneStepWorkflow;
}

describe('buildStepDefinitions (decorators → validated steps)', () => {
  describe('valid workflows', () => {
    it('keeps declaration order and defaults the name to the method name', () => {
      @Workflow()
      class OrderWorkflow {
        @Step() reserveStock(): void {}
        @Step('capture_payment') capturePayment(): void {}
        @ResumableStep() notify(): void {}
        @Step() ship(): void {}
      }
      const steps = build(OrderWorkflow);
      expect(steps.map((s) => [s.name, s.kind, s.methodName])).toEqual([
        ['reserveStock', 'step', 'reserveStock'],
        ['capture_payment', 'step', 'capturePayment'],
        ['notify', 'resumable', 'notify'],
        ['ship', 'step', 'ship'],
      ]);
    });

    it('gives an option-less step no wait, signal, skip condition, policy or job options', () => {
      @Workflow()
      class Plain {
        @Step() only(): void {}
      }
      expect(build(Plain)[0]).toEqual({
        name: 'only',
        kind: 'step',
        methodName: 'only',
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
      });
    });

    it('does not treat @CancelIf methods as steps', () => {
      @Workflow()
      class WithCancel {
        @CancelIf() voided(): boolean {
          return false;
        }
        @Step() a(): void {}
      }
      expect(names(WithCancel)).toEqual(['a']);
      expect(accessor.getCancelIfMethods(WithCancel)).toEqual(['voided']);
    });

    it.each([
      ['2 days', 172_800_000],
      ['30s', 30_000],
      [5000, 5000],
      [0, 0],
    ])('converts wait %p to %p ms', (wait, ms) => {
      expect(build(oneStep({ wait }))[1].waitMs).toBe(ms);
    });

    it('turns a waitFor name into a SignalMatcher of that name', () => {
      const waitFor = build(oneStep({ waitFor: 'payment_confirmed' }))[1].waitFor;
      expect(waitFor).toBeInstanceOf(SignalMatcher);
      expect((waitFor as SignalMatcher).name).toBe('payment_confirmed');
    });

    it('keeps a SignalMatcher or any object with matches() as given', () => {
      const matcher = new SignalMatcher('paid', () => true);
      expect(build(oneStep({ waitFor: matcher }))[1].waitFor).toBe(matcher);
      const custom = { matches: (signal: SignalEntity) => signal.name.startsWith('paid') };
      expect(build(oneStep({ waitFor: custom }))[1].waitFor).toBe(custom);
    });

    it('allows wait and waitFor together', () => {
      const [, step] = build(oneStep({ wait: '1h', waitFor: 'paid' }));
      expect(step.waitMs).toBe(3_600_000);
      expect((step.waitFor as SignalMatcher).name).toBe('paid');
    });

    it('accepts skipIf as a boolean, a predicate or the name of a method', () => {
      const predicate = (): boolean => true;
      expect(build(oneStep({ skipIf: true }))[1].skipIf).toBe(true);
      expect(build(oneStep({ skipIf: false }))[1].skipIf).toBe(false);
      expect(build(oneStep({ skipIf: predicate }))[1].skipIf).toBe(predicate);
      expect(build(oneStep({ skipIf: 'first' }))[1].skipIf).toBe('first');
    });

    it("turns onException: 'reattempt' into a reattempt policy with the default limit 100", () => {
      const [policy] = build(oneStep({ onException: 'reattempt' }))[1].policies!;
      expect(policy).toBeInstanceOf(ExceptionPolicy);
      expect(policy.action).toBe('reattempt');
      expect(policy.maxReattempts).toBe(100);
      expect(policy.terminalAction).toBe('pause');
    });

    it("passes maxReattempts and terminalAction to the 'reattempt' policy; null is unlimited", () => {
      const [limited] = build(
        oneStep({ onException: 'reattempt', maxReattempts: 3, terminalAction: 'skip' }),
      )[1].policies!;
      expect(limited.maxReattempts).toBe(3);
      expect(limited.terminalAction).toBe('skip');
      const [unlimited] = build(oneStep({ onException: 'reattempt', maxReattempts: null }))[1]
        .policies!;
      expect(unlimited.maxReattempts).toBeNull();
    });

    it.each(['pause', 'cancel', 'skip'] as const)(
      "turns onException '%s' into a policy",
      (action) => {
        const policies = build(oneStep({ onException: action }))[1].policies!;
        expect(policies.map((p) => p.action)).toEqual([action]);
      },
    );

    it('keeps an ExceptionPolicy and copies an array of them in order', () => {
      const single = new ExceptionPolicy('cancel');
      expect(build(oneStep({ onException: single }))[1].policies).toEqual([single]);
      const first = new ExceptionPolicy('skip', { matching: TypeError });
      const second = new ExceptionPolicy('pause');
      const list = [first, second];
      const policies = build(oneStep({ onException: list }))[1].policies!;
      expect(policies).toEqual([first, second]);
      expect(policies[0]).toBe(first);
      expect(policies).not.toBe(list);
    });

    it('validates and keeps job options', () => {
      const waitUntil = new Date('2030-01-01T00:00:00Z');
      expect(
        build(oneStep({ jobOptions: { queue: 'mail', priority: 1, wait: '5m', waitUntil } }))[1]
          .jobOptions,
      ).toEqual({ queue: 'mail', priority: 1, wait: '5m', waitUntil });
    });

    it('keeps maxIterations and converts maxRuntime of a resumable step', () => {
      const [, step] = build(oneStep({ maxIterations: 1000, maxRuntime: '5m' }, true));
      expect(step.kind).toBe('resumable');
      expect(step.maxIterations).toBe(1000);
      expect(step.maxRuntimeMs).toBe(300_000);
    });

    it('accepts every @Step option on a resumable step, waitFor included', () => {
      const [, step] = build(
        oneStep({ waitFor: 'go', wait: '1s', onException: 'reattempt', maxReattempts: 2 }, true),
      );
      expect((step.waitFor as SignalMatcher).name).toBe('go');
      expect(step.policies![0].maxReattempts).toBe(2);
    });

    it('records positioning by beforeStep / afterStep, including references to removed steps', () => {
      @Workflow()
      class Positioned {
        @Step() a(): void {}
        @RemovedStep() legacy?: never;
        @Step() b(): void {}
        @Step({ beforeStep: 'b' }) beforeB(): void {}
        @Step({ afterStep: 'legacy' }) afterLegacy(): void {}
      }
      const steps = build(Positioned);
      expect(steps.find((s) => s.name === 'beforeB')!.beforeStep).toBe('b');
      expect(steps.find((s) => s.name === 'afterLegacy')!.afterStep).toBe('legacy');
      expect(new StepCollection(steps).ordered.map((s) => s.name)).toEqual([
        'a',
        'legacy',
        'afterLegacy',
        'beforeB',
        'b',
      ]);
    });
  });

  describe('removed steps', () => {
    it('records gravestones in declaration order, by property name or explicit name', () => {
      @Workflow()
      class Gravestones {
        @Step() a(): void {}
        @RemovedStep() capturePayment?: never;
        @RemovedStep('old_ship') legacy?: never;
        @Step() b(): void {}
      }
      const steps = build(Gravestones);
      expect(steps.map((s) => [s.name, s.kind, s.methodName])).toEqual([
        ['a', 'step', 'a'],
        ['capturePayment', 'removed', null],
        ['old_ship', 'removed', null],
        ['b', 'step', 'b'],
      ]);
    });

    it('refuses a duplicate removed step', () => {
      @Workflow()
      class TwiceRemoved {
        @RemovedStep('gone') one?: never;
        @RemovedStep('gone') two?: never;
      }
      expectStepError(TwiceRemoved, 'gone', /already defined in TwiceRemoved/);
    });

    it('refuses a removed step named like a live step', () => {
      @Workflow()
      class Clash {
        @Step() ship(): void {}
        @RemovedStep('ship') legacy?: never;
      }
      expectStepError(Clash, 'ship', /already defined/);
    });

    it('refuses a blank removed-step name', () => {
      @Workflow()
      class BlankGrave {
        @RemovedStep('') legacy?: never;
      }
      expectStepError(BlankGrave, '', /must not be blank/);
    });
  });

  describe('unknown option keys', () => {
    it('are refused, naming the key and the allowed keys', () => {
      expectStepError(
        oneStep(untyped({ waitt: '5s', retries: 3 })),
        's',
        /unknown option\(s\) waitt, retries/,
        /Allowed: wait, waitFor, skipIf, onException/,
      );
    });

    it('include maxIterations / maxRuntime on a plain @Step', () => {
      expectStepError(
        oneStep(untyped({ maxIterations: 5 })),
        's',
        /unknown option\(s\) maxIterations/,
      );
      expectStepError(
        oneStep(untyped({ maxRuntime: '5m' })),
        's',
        /unknown option\(s\) maxRuntime/,
      );
    });

    it('include the gem-only if: alias', () => {
      expectStepError(oneStep(untyped({ if: true })), 's', /unknown option\(s\) if/);
    });
  });

  describe('wait', () => {
    it.each<[string, unknown]>([
      ['a word', 'later'],
      ['a bare number string', '7200'],
      ['a decimal string', '1.5'],
      ['a signal name', 'payment_confirmed'],
      ['a SignalMatcher', new SignalMatcher('paid')],
      ['an object with matches()', { matches: () => true }],
    ])('refuses %s, pointing at waitFor', (_, wait) => {
      expectStepError(
        oneStep(untyped({ wait })),
        's',
        /wait takes a duration; to wait for a signal, use waitFor/,
      );
    });

    it.each([-1, NaN, Infinity])('refuses the number %p', (wait) => {
      expectStepError(
        oneStep({ wait }),
        's',
        /invalid wait .*must be a finite number of milliseconds >= 0/,
      );
    });

    it.each([true, null, new Date()])('refuses %p', (wait) => {
      expectStepError(oneStep(untyped({ wait })), 's', /invalid wait/);
    });

    it.each<[string, string | number, RegExp]>([
      [
        'a string',
        '500000 weeks',
        /has wait '500000 weeks', which would make the step due on \+011\d{3}-/,
      ],
      [
        'a number of milliseconds',
        1e20,
        /has wait 100000000000000000000, which would make the step due beyond the range of a JavaScript Date/,
      ],
    ])(
      'refuses %s that would make the step due after 9999-12-31 (SPEC §16.1), naming the limit',
      (_, wait, pattern) => {
        expectStepError(
          oneStep({ wait }),
          's',
          pattern,
          /after 9999-12-31T23:59:59\.999Z: the library stores dates from 0001-01-01 to 9999-12-31 \(UTC\) only\. Use a shorter wait\.$/,
        );
      },
    );

    it('accepts a long wait that ends by 9999-12-31', () => {
      expect(build(oneStep({ wait: '1000 weeks' }))[1].waitMs).toBe(1000 * 7 * 24 * 3600 * 1000);
    });
  });

  describe('waitFor', () => {
    it.each<[string, unknown]>([
      ['a duration string', '2 days'],
      ['a short duration string', '30s'],
      ['a number', 5000],
      ['a Date', new Date()],
    ])('refuses %s, pointing at wait', (_, waitFor) => {
      expectStepError(
        oneStep(untyped({ waitFor })),
        's',
        /waitFor takes a signal name or matcher; to delay the step, use wait/,
      );
    });

    it('refuses a blank signal name', () => {
      expectStepError(oneStep({ waitFor: '  ' }), 's', /blank waitFor signal name/);
    });

    it.each([null, true, {}, { matches: true }])('refuses %p', (waitFor) => {
      expectStepError(
        oneStep(untyped({ waitFor })),
        's',
        /invalid waitFor .*signal name, a SignalMatcher, or an object with matches\(signal\)/,
      );
    });
  });

  describe('timeout and onTimeout (SPEC §16.3)', () => {
    const step = (options: StepOptions | ResumableStepOptions, resumable = false) =>
      build(oneStep(options, resumable)).find((definition) => definition.name === 's')!;

    it('takes a duration with waitFor, and defaults to no onTimeout (the exception policy decides)', () => {
      expect(step({ waitFor: 'payment', timeout: '3 days' })).toMatchObject({
        timeoutMs: 3 * 86_400_000,
        onTimeout: null,
      });
      expect(step({ waitFor: 'payment' })).toMatchObject({ timeoutMs: null, onTimeout: null });
      expect(step({ waitFor: 'payment', timeout: 1500 }, true).timeoutMs).toBe(1500);
    });

    it('turns an action into a policy and keeps a policy as given', () => {
      expect(
        step({ waitFor: 'payment', timeout: '1h', onTimeout: 'skip' }).onTimeout,
      ).toMatchObject({
        action: 'skip',
      });
      const policy = new ExceptionPolicy('reattempt', {
        maxReattempts: 2,
        terminalAction: 'cancel',
      });
      expect(step({ waitFor: 'payment', timeout: '1h', onTimeout: policy }).onTimeout).toBe(policy);
    });

    it('refuses a timeout without waitFor, pointing at wait', () => {
      expectStepError(
        oneStep({ timeout: '1h' }),
        's',
        /timeout '1h' but no waitFor/,
        /use wait to delay/,
      );
    });

    it('refuses onTimeout without a timeout', () => {
      expectStepError(
        oneStep({ waitFor: 'payment', onTimeout: 'skip' }),
        's',
        /onTimeout but no timeout; add timeout/,
      );
    });

    it.each<[string, unknown]>([
      ['zero', 0],
      ['a negative number', -5],
      ['words', 'soon'],
      ['null', null],
    ])('refuses a timeout of %s', (_, timeout) => {
      expectStepError(
        oneStep(untyped({ waitFor: 'payment', timeout })),
        's',
        /invalid timeout .*positive duration/,
      );
    });

    it('refuses a timeout whose deadline would fall after 9999-12-31', () => {
      expectStepError(
        oneStep({ waitFor: 'payment', timeout: '500000 weeks' }),
        's',
        /timeout '500000 weeks'/,
      );
    });

    it.each<[string, unknown]>([
      ['an unknown action', 'finish'],
      ['an array of policies', [new ExceptionPolicy('skip')]],
      ['a number', 3],
    ])('refuses onTimeout as %s', (_, onTimeout) => {
      expectStepError(
        oneStep(untyped({ waitFor: 'payment', timeout: '1h', onTimeout })),
        's',
        /invalid onTimeout .*pause, cancel, reattempt, skip or an ExceptionPolicy/,
      );
    });
  });

  describe('skipIf', () => {
    it('refuses the name of a method the workflow does not have', () => {
      expectStepError(
        oneStep({ skipIf: 'alreadyShipped' }),
        's',
        /skipIf 'alreadyShipped'.*no method of that name/,
      );
    });

    it.each([42, {}, ['first']])('refuses %p', (skipIf) => {
      expectStepError(
        oneStep(untyped({ skipIf })),
        's',
        /invalid skipIf .*boolean, a predicate .*method name/,
      );
    });
  });

  describe('onException', () => {
    it.each(['retry', 'reattempt!', 'finish'])('refuses the action %p', (onException) => {
      expectStepError(
        oneStep(untyped({ onException })),
        's',
        /invalid onException .*must be one of pause, cancel, reattempt, skip/,
      );
    });

    it.each([42, {}, () => 'pause'])('refuses %p', (onException) => {
      expectStepError(
        oneStep(untyped({ onException })),
        's',
        /invalid onException .*an ExceptionPolicy, or an array of ExceptionPolicy/,
      );
    });

    it('refuses an array with a non-policy element', () => {
      expectStepError(
        oneStep(untyped({ onException: [new ExceptionPolicy('skip'), 'pause'] })),
        's',
        /invalid onException array element 'pause'.*ExceptionPolicy instances only/,
      );
    });

    it('refuses an empty array', () => {
      expectStepError(oneStep({ onException: [] }), 's', /onException is an empty array/);
    });
  });

  describe('maxReattempts and terminalAction', () => {
    it.each<[string, StepOptions]>([
      ['maxReattempts without onException', { maxReattempts: 3 }],
      ["maxReattempts with 'pause'", { onException: 'pause', maxReattempts: 3 }],
      ["maxReattempts: null with 'skip'", { onException: 'skip', maxReattempts: null }],
      ['terminalAction without onException', { terminalAction: 'cancel' }],
      ["terminalAction with 'cancel'", { onException: 'cancel', terminalAction: 'skip' }],
    ])("refuses %s (only with 'reattempt')", (_, options) => {
      expectStepError(oneStep(options), 's', /but onException is not 'reattempt'/);
    });

    it('refuses them beside an ExceptionPolicy or an array, pointing at the policy', () => {
      expectStepError(
        oneStep({ onException: new ExceptionPolicy('reattempt'), maxReattempts: 3 }),
        's',
        /maxReattempts beside an ExceptionPolicy or array; set maxReattempts on the ExceptionPolicy/,
      );
      expectStepError(
        oneStep({ onException: [new ExceptionPolicy('reattempt')], terminalAction: 'skip' }),
        's',
        /terminalAction beside an ExceptionPolicy or array/,
      );
    });

    it.each([0, -1, 5.5])(
      'refuses the non-positive or fractional maxReattempts %p',
      (maxReattempts) => {
        expectStepError(
          oneStep({ onException: 'reattempt', maxReattempts }),
          's',
          /maxReattempts must be a positive integer or null/,
        );
      },
    );

    it('refuses an unknown terminalAction', () => {
      expectStepError(
        oneStep(untyped({ onException: 'reattempt', terminalAction: 'reattempt' })),
        's',
        /terminalAction 'reattempt' is invalid; use one of pause, cancel, skip/,
      );
    });
  });

  describe('beforeStep / afterStep', () => {
    it('refuses both at once', () => {
      expectStepError(
        oneStep({ beforeStep: 'first', afterStep: 'first' }),
        's',
        /cannot specify both beforeStep and afterStep/,
      );
    });

    it('refuses a reference to an undefined step', () => {
      expectStepError(
        oneStep({ afterStep: 'nope' }),
        's',
        /references non-existent step 'nope' in afterStep/,
      );
      expectStepError(
        oneStep({ beforeStep: 'nope' }),
        's',
        /references non-existent step 'nope' in beforeStep/,
      );
    });

    it('refuses a reference to a step declared later', () => {
      @Workflow()
      class Forward {
        @Step({ beforeStep: 'later' }) early(): void {}
        @Step() later(): void {}
      }
      expectStepError(Forward, 'early', /references non-existent step 'later' in beforeStep/);
    });

    it('refuses a reference to itself', () => {
      expectStepError(oneStep({ afterStep: 's' }), 's', /non-existent step 's'/);
    });

    it.each(['', 42])('refuses the non-name %p', (afterStep) => {
      expectStepError(
        oneStep(untyped({ afterStep })),
        's',
        /afterStep must be the name of an earlier step/,
      );
    });
  });

  describe('duplicate step names', () => {
    it('refuses an explicit name equal to another step', () => {
      @Workflow()
      class Dup {
        @Step() ship(): void {}
        @Step('ship') shipAgain(): void {}
      }
      expectStepError(Dup, 'ship', /already defined in Dup/);
    });

    it('refuses re-decorating a parent step in a subclass, pointing at overriding instead', () => {
      @Workflow()
      class Parent {
        @Step() a(): void {}
      }
      @Workflow()
      class Child extends Parent {
        @Step() override a(): void {}
      }
      expectStepError(Child, 'a', /already defined/, /override the method without a decorator/);
      expect(names(Parent)).toEqual(['a']);
    });
  });

  describe('job options', () => {
    it('refuses an unknown key such as piority, naming it', () => {
      expectStepError(
        oneStep({ jobOptions: untyped({ piority: 1 }) }),
        's',
        /jobOptions has unknown job option key\(s\): piority/,
      );
    });

    it.each<[string, Record<string, unknown>, RegExp]>([
      ['priority as a word', { priority: 'high' }, /priority: 'high'/],
      ['a queue name with a colon', { queue: 'a:b' }, /queue: 'a:b'/],
      ['wait that is not a duration', { wait: 'later' }, /wait: 'later'/],
      ['waitUntil that is not a Date', { waitUntil: '2030-01-01' }, /waitUntil: '2030-01-01'/],
      [
        'wait ending after 9999-12-31',
        { wait: '500000 weeks' },
        /wait: '500000 weeks' \(would make the step due on \+\d{6}-.*, after 9999-12-31T23:59:59\.999Z/,
      ],
      [
        'waitUntil after year 9999',
        { waitUntil: new Date('+010000-01-01T00:00:00.000Z') },
        /waitUntil: Date\(\+010000-01-01T00:00:00\.000Z\) \(outside years 1–9999/,
      ],
    ])('refuses %s', (_, jobOptions, pattern) => {
      expectStepError(
        oneStep({ jobOptions: untyped(jobOptions) }),
        's',
        /jobOptions has invalid job option value/,
        pattern,
      );
    });
  });

  describe('repeat (polling steps, SPEC §14.6)', () => {
    it('expands into name_1 … name_n, the first with the step wait, the rest with every', () => {
      @Workflow()
      class Polling {
        @Step() a(): void {}
        @Step({ wait: '1m', repeat: { times: 3, every: '10m' } }) poll(): void {}
        @Step() b(): void {}
      }
      const steps = build(Polling);
      expect(steps.map((s) => [s.name, s.methodName, s.waitMs])).toEqual([
        ['a', 'a', null],
        ['poll_1', 'poll', 60_000],
        ['poll_2', 'poll', 600_000],
        ['poll_3', 'poll', 600_000],
        ['b', 'b', null],
      ]);
      expect(new StepCollection(steps).ordered.map((s) => s.name)).toEqual([
        'a',
        'poll_1',
        'poll_2',
        'poll_3',
        'b',
      ]);
    });

    it('uses the explicit name and keeps every other option on each copy', () => {
      const policy = new ExceptionPolicy('skip');
      @Workflow()
      class Named {
        @Step('check', { repeat: { times: 2 }, onException: policy, waitFor: 'tick' })
        poll(): void {}
      }
      const steps = build(Named);
      expect(steps.map((s) => [s.name, s.waitMs])).toEqual([
        ['check_1', null],
        ['check_2', null],
      ]);
      for (const step of steps) {
        expect(step.policies).toEqual([policy]);
        expect((step.waitFor as SignalMatcher).name).toBe('tick');
      }
    });

    it('keeps the copies together when the step is positioned', () => {
      @Workflow()
      class PositionedPoll {
        @Step() a(): void {}
        @Step() b(): void {}
        @Step({ beforeStep: 'b', repeat: { times: 2, every: '1s' } }) poll(): void {}
      }
      expect(new StepCollection(build(PositionedPoll)).ordered.map((s) => s.name)).toEqual([
        'a',
        'poll_1',
        'poll_2',
        'b',
      ]);
    });

    it('refuses a generated name that clashes with a declared step', () => {
      @Workflow()
      class Clash {
        @Step({ repeat: { times: 2 } }) poll(): void {}
        @Step('poll_2') other(): void {}
      }
      expectStepError(Clash, 'poll_2', /already defined/);
    });

    it.each<[string, unknown, RegExp]>([
      ['times 0', { times: 0 }, /invalid repeat\.times 0: must be a positive integer/],
      ['times -2', { times: -2 }, /invalid repeat\.times/],
      ['times 1.5', { times: 1.5 }, /invalid repeat\.times/],
      ['missing times', { every: '1m' }, /invalid repeat\.times/],
      [
        'every that is not a duration',
        { times: 2, every: 'later' },
        /invalid repeat\.every 'later'/,
      ],
      [
        'every that would make a copy due after 9999-12-31',
        { times: 2, every: '500000 weeks' },
        /has repeat\.every '500000 weeks', which would make the step due on \+\d{6}-.*after 9999-12-31T23:59:59\.999Z.*Use a shorter repeat\.every\./,
      ],
      [
        'an unknown key',
        { times: 2, interval: '1m' },
        /invalid repeat .*\{ times: number, every\?: Duration \}/,
      ],
      ['a number', 3, /invalid repeat 3/],
      ['null', null, /invalid repeat null/],
    ])('refuses %s', (_, repeat, pattern) => {
      expectStepError(oneStep(untyped({ repeat })), 's', pattern);
    });
  });

  describe('resumable options', () => {
    it.each([0, -1, 1.5, '10'])('refuses maxIterations %p', (maxIterations) => {
      expectStepError(
        oneStep(untyped({ maxIterations }), true),
        's',
        /invalid maxIterations .*must be a positive integer/,
      );
    });

    it.each([0, -5, 'later', '0s', NaN])('refuses maxRuntime %p', (maxRuntime) => {
      expectStepError(
        oneStep(untyped({ maxRuntime }), true),
        's',
        /invalid maxRuntime .*must be a positive duration/,
      );
    });
  });

  describe('structure', () => {
    it('refuses a blank explicit step name', () => {
      @Workflow()
      class Blank {
        @Step('') a(): void {}
      }
      expectStepError(Blank, '', /must not be blank/);
    });

    it('refuses a decorated member that is not a method', () => {
      const recorded: RecordedStep[] = [
        { kind: 'step', name: undefined, propertyKey: 'notAMethod', options: {} },
      ];
      expect(() => buildStepDefinitions('Broken', { notAMethod: 5 }, recorded)).toThrow(
        /Workflow Broken, step 'notAMethod': decorates 'notAMethod', which is not a method/,
      );
    });

    it('refuses options that are not an object', () => {
      const recorded = [
        { kind: 'step', name: undefined, propertyKey: 'a', options: 'fast' },
      ] as unknown as RecordedStep[];
      expect(() => buildStepDefinitions('Odd', { a() {} }, recorded)).toThrow(
        /Workflow Odd, step 'a': options must be an object/,
      );
    });
  });

  describe('inheritance', () => {
    it("puts the parent's steps first and never mutates the parent", () => {
      @Workflow()
      class Base {
        @Step() a(): void {}
        @Step() b(): void {}
      }
      @Workflow()
      class Extended extends Base {
        @Step({ afterStep: 'a' }) between(): void {}
        @Step() c(): void {}
      }
      @Workflow()
      class Sibling extends Base {
        @Step() d(): void {}
      }
      expect(names(Extended)).toEqual(['a', 'b', 'between', 'c']);
      expect(new StepCollection(build(Extended)).ordered.map((s) => s.name)).toEqual([
        'a',
        'between',
        'b',
        'c',
      ]);
      expect(names(Sibling)).toEqual(['a', 'b', 'd']);
      expect(names(Base)).toEqual(['a', 'b']);
    });

    it('lets a subclass override a step body without re-decorating it', () => {
      @Workflow()
      class Base {
        @Step() a(): string {
          return 'base';
        }
      }
      @Workflow()
      class Override extends Base {
        override a(): string {
          return 'child';
        }
      }
      const [step] = build(Override);
      expect(step.name).toBe('a');
      const method = (Override.prototype as unknown as Record<string, () => string>)[
        step.methodName!
      ];
      expect(method.call(new Override())).toBe('child');
    });

    it('inherits cancel conditions, parent first', () => {
      @Workflow()
      class Base {
        @CancelIf() baseVoided(): boolean {
          return false;
        }
      }
      @Workflow()
      class Derived extends Base {
        @CancelIf() derivedVoided(): boolean {
          return false;
        }
      }
      expect(accessor.getCancelIfMethods(Derived)).toEqual(['baseVoided', 'derivedVoided']);
      expect(accessor.getCancelIfMethods(Base)).toEqual(['baseVoided']);
    });
  });
});
