import { ExceptionPolicy, StepConfigurationError } from '../../lib';
import { DEFAULT_MAX_REATTEMPTS, isErrorClass } from '../../lib/api/exception-policy';

class PaymentError extends Error {}
class CardDeclinedError extends PaymentError {}
class UnrelatedError extends Error {}

/** Calls the constructor with values the public types forbid, the way JavaScript callers can. */
function construct(...args: unknown[]): ExceptionPolicy {
  const Ctor = ExceptionPolicy as unknown as new (...a: unknown[]) => ExceptionPolicy;
  return new Ctor(...args);
}

function expectPolicyError(build: () => unknown, message: RegExp): void {
  let thrown: unknown;
  try {
    build();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(StepConfigurationError);
  expect((thrown as Error).message).toMatch(/^ExceptionPolicy /);
  expect((thrown as Error).message).toMatch(message);
}

describe('ExceptionPolicy', () => {
  describe('declarative actions', () => {
    it.each(['pause', 'cancel', 'reattempt', 'skip'] as const)('accepts %p', (action) => {
      const policy = new ExceptionPolicy(action);
      expect(policy.action).toBe(action);
      expect(policy.handler).toBeNull();
      expect(policy.report).toBe('always');
      expect(policy.terminalAction).toBe('pause');
    });

    it.each(['pause!', 'retry', 'finish', '', 'Pause'])('refuses unknown action %p', (action) => {
      expectPolicyError(() => construct(action), /unknown action .*pause, cancel, reattempt, skip/);
    });

    it('refuses unknown option keys, naming them and the allowed ones', () => {
      expectPolicyError(
        () => construct('reattempt', { maxRetries: 3, wiat: 5 }),
        /unknown option\(s\) maxRetries, wiat; allowed: matching, wait, jitter, maxReattempts, terminalAction, report/,
      );
    });

    it('refuses a non-object options argument', () => {
      expectPolicyError(() => construct('pause', null), /options/);
      expectPolicyError(() => construct('pause', 'always'), /options/);
    });

    it('refuses something that is neither an action nor an options object', () => {
      expectPolicyError(() => construct(42), /action name or an options object/);
      expectPolicyError(() => construct(null), /action name or an options object/);
    });
  });

  describe('maxReattempts', () => {
    it(`defaults to ${DEFAULT_MAX_REATTEMPTS} for 'reattempt'`, () => {
      expect(DEFAULT_MAX_REATTEMPTS).toBe(100);
      expect(new ExceptionPolicy('reattempt').maxReattempts).toBe(100);
      expect(new ExceptionPolicy('reattempt', { maxReattempts: undefined }).maxReattempts).toBe(
        100,
      );
    });

    it('accepts a positive integer', () => {
      expect(new ExceptionPolicy('reattempt', { maxReattempts: 3 }).maxReattempts).toBe(3);
    });

    it('takes null as unlimited', () => {
      expect(new ExceptionPolicy('reattempt', { maxReattempts: null }).maxReattempts).toBeNull();
    });

    it.each([0, -1, 5.5, NaN, Infinity, '3'])('refuses %p', (value) => {
      expectPolicyError(
        () => construct('reattempt', { maxReattempts: value }),
        /maxReattempts must be a positive integer or null/,
      );
    });

    it.each(['pause', 'cancel', 'skip'] as const)("is refused with '%s'", (action) => {
      expectPolicyError(
        () => construct(action, { maxReattempts: 3 }),
        /maxReattempts is only allowed with the 'reattempt' action/,
      );
    });
  });

  describe('terminalAction', () => {
    it.each(['pause', 'cancel', 'skip'] as const)("accepts '%s' with 'reattempt'", (terminal) => {
      expect(new ExceptionPolicy('reattempt', { terminalAction: terminal }).terminalAction).toBe(
        terminal,
      );
    });

    it("defaults to 'pause'", () => {
      expect(new ExceptionPolicy('reattempt').terminalAction).toBe('pause');
    });

    it.each(['reattempt', 'finish', 'pause!'])('refuses %p', (terminal) => {
      expectPolicyError(
        () => construct('reattempt', { terminalAction: terminal }),
        /terminalAction .* is invalid; use one of pause, cancel, skip/,
      );
    });

    it("is refused without 'reattempt'", () => {
      expectPolicyError(
        () => construct('cancel', { terminalAction: 'skip' }),
        /terminalAction is only allowed with the 'reattempt' action/,
      );
    });
  });

  describe('wait and jitter', () => {
    it('accepts durations and backoff strategies', () => {
      expect(new ExceptionPolicy('reattempt', { wait: '30s' }).wait).toBe('30s');
      expect(new ExceptionPolicy('reattempt', { wait: 5000 }).wait).toBe(5000);
      expect(new ExceptionPolicy('reattempt', { wait: 'exponential' }).wait).toBe('exponential');
      expect(new ExceptionPolicy('reattempt', { wait: 'polynomial' }).wait).toBe('polynomial');
      const strategy = (attempt: number): number => attempt * 1000;
      expect(new ExceptionPolicy('reattempt', { wait: strategy }).wait).toBe(strategy);
    });

    it('has no wait unless given', () => {
      expect(new ExceptionPolicy('reattempt').wait).toBeNull();
    });

    it.each(['later', -1, NaN, 'linear'])('refuses wait %p', (wait) => {
      expectPolicyError(
        () => construct('reattempt', { wait }),
        /wait .* is neither a duration nor a backoff strategy/,
      );
    });

    it.each<[string, string | number, RegExp]>([
      [
        '500000 weeks',
        '500000 weeks',
        /^ExceptionPolicy wait '500000 weeks' would make the step due on \+011\d{3}-/,
      ],
      [
        '1e20 ms',
        1e20,
        /^ExceptionPolicy wait 100000000000000000000 would make the step due beyond the range of a JavaScript Date/,
      ],
    ])(
      'refuses a wait of %s, which would make the reattempt due after 9999-12-31 (SPEC §16.1)',
      (_, wait, pattern) => {
        expectPolicyError(() => new ExceptionPolicy('reattempt', { wait }), pattern);
        expectPolicyError(
          () => new ExceptionPolicy('reattempt', { wait }),
          /after 9999-12-31T23:59:59\.999Z: the library stores dates from 0001-01-01 to 9999-12-31 \(UTC\) only; use a shorter wait\.$/,
        );
      },
    );

    it('accepts a long wait that ends by 9999-12-31', () => {
      expect(new ExceptionPolicy('reattempt', { wait: '1000 weeks' }).wait).toBe('1000 weeks');
    });

    it("refuses wait without 'reattempt'", () => {
      expectPolicyError(
        () => construct('pause', { wait: '5s' }),
        /wait is only allowed with the 'reattempt' action/,
      );
    });

    it('defaults jitter to 0.15 for the named strategies and to none otherwise', () => {
      expect(new ExceptionPolicy('reattempt', { wait: 'exponential' }).jitter).toBe(0.15);
      expect(new ExceptionPolicy('reattempt', { wait: 'polynomial' }).jitter).toBe(0.15);
      expect(new ExceptionPolicy('reattempt', { wait: () => 1000 }).jitter).toBeNull();
      expect(new ExceptionPolicy('reattempt', { wait: '5s' }).jitter).toBeNull();
      expect(new ExceptionPolicy('reattempt').jitter).toBeNull();
    });

    it.each([0, 0.5, 1])('accepts jitter %p with a strategy', (jitter) => {
      expect(new ExceptionPolicy('reattempt', { wait: 'exponential', jitter }).jitter).toBe(jitter);
      expect(new ExceptionPolicy('reattempt', { wait: () => 10, jitter }).jitter).toBe(jitter);
    });

    it.each([-0.1, 1.01, NaN, '0.5'])('refuses jitter %p', (jitter) => {
      expectPolicyError(
        () => construct('reattempt', { wait: 'exponential', jitter }),
        /jitter must be a number from 0 to 1/,
      );
    });

    it('refuses jitter with a plain duration or no wait', () => {
      expectPolicyError(
        () => construct('reattempt', { wait: '5s', jitter: 0.1 }),
        /jitter is only allowed with a backoff strategy/,
      );
      expectPolicyError(
        () => construct('reattempt', { jitter: 0.1 }),
        /jitter is only allowed with a backoff strategy/,
      );
    });

    it("refuses jitter without 'reattempt'", () => {
      expectPolicyError(
        () => construct('skip', { jitter: 0.1 }),
        /jitter is only allowed with the 'reattempt' action/,
      );
    });
  });

  describe('report', () => {
    it.each(['always', 'never', 'terminalOnly'] as const)('accepts %p', (report) => {
      expect(new ExceptionPolicy('pause', { report }).report).toBe(report);
      expect(new ExceptionPolicy({ handler: () => undefined, report }).report).toBe(report);
    });

    it("defaults to 'always'", () => {
      expect(new ExceptionPolicy('cancel').report).toBe('always');
      expect(new ExceptionPolicy({ handler: () => undefined }).report).toBe('always');
    });

    it.each(['terminal_only', 'sometimes', true])('refuses %p', (report) => {
      expectPolicyError(
        () => construct('pause', { report }),
        /report .* is invalid; use one of always, never, terminalOnly/,
      );
      expectPolicyError(
        () => construct({ handler: () => undefined, report }),
        /report .* is invalid/,
      );
    });
  });

  describe('imperative policies', () => {
    it('keeps the handler and has no action', () => {
      const handler = (): void => undefined;
      const policy = new ExceptionPolicy({ handler });
      expect(policy.handler).toBe(handler);
      expect(policy.action).toBeNull();
      expect(policy.wait).toBeNull();
      expect(policy.maxReattempts).toBeNull();
    });

    it('needs a handler function', () => {
      expectPolicyError(() => construct({}), /needs either an action .* or a handler function/);
      expectPolicyError(
        () => construct({ matching: PaymentError }),
        /needs either an action .* or a handler function/,
      );
      expectPolicyError(
        () => construct({ handler: 'pause' }),
        /needs either an action .* or a handler function/,
      );
    });

    it('refuses declarative-only keys and unknown keys', () => {
      expectPolicyError(
        () => construct({ handler: () => undefined, wait: '5s' }),
        /unknown option\(s\) wait; allowed: matching, handler, report/,
      );
      expectPolicyError(
        () => construct({ handler: () => undefined, maxReattempts: 3 }),
        /unknown option\(s\) maxReattempts/,
      );
    });
  });

  describe('matching', () => {
    it('refuses non-function matchers', () => {
      for (const matching of ['PaymentError', 42, null, { name: 'x' }, [PaymentError, 'Other']]) {
        expectPolicyError(
          () => construct('pause', { matching }),
          /matching takes error classes or predicates/,
        );
        expectPolicyError(
          () => construct({ handler: () => undefined, matching }),
          /matching takes error classes or predicates/,
        );
      }
    });

    it('refuses an empty matching list, which would catch every error', () => {
      expectPolicyError(() => construct('pause', { matching: [] }), /matching is an empty array/);
      expectPolicyError(
        () => construct({ handler: () => undefined, matching: [] }),
        /matching is an empty array/,
      );
    });

    it('is blanket without matching and specific with it', () => {
      expect(new ExceptionPolicy('pause').isBlanket).toBe(true);
      expect(new ExceptionPolicy('pause', { matching: PaymentError }).isBlanket).toBe(false);
      expect(new ExceptionPolicy('pause', { matching: [() => true] }).isBlanket).toBe(false);
    });

    it('does not keep a reference to the caller array', () => {
      const matching = [PaymentError];
      const policy = new ExceptionPolicy('pause', { matching });
      matching.push(UnrelatedError);
      expect(policy.matchers).toEqual([PaymentError]);
    });
  });

  describe('captures()', () => {
    it('a blanket policy captures every error, and non-errors too', () => {
      const policy = new ExceptionPolicy('pause');
      expect(policy.captures(new Error('x'))).toBe(true);
      expect(policy.captures('a string')).toBe(true);
    });

    it('an error class captures instances of it and of its subclasses only', () => {
      const policy = new ExceptionPolicy('cancel', { matching: PaymentError });
      expect(policy.captures(new PaymentError())).toBe(true);
      expect(policy.captures(new CardDeclinedError())).toBe(true);
      expect(policy.captures(new UnrelatedError())).toBe(false);
      expect(policy.captures(new Error())).toBe(false);
    });

    it('Error itself as a matcher captures every Error', () => {
      const policy = new ExceptionPolicy('cancel', { matching: Error });
      expect(policy.captures(new UnrelatedError())).toBe(true);
      expect(policy.captures(new TypeError())).toBe(true);
      expect(policy.captures({ message: 'not an error' })).toBe(false);
    });

    it('an error class is used with instanceof, never called', () => {
      const policy = new ExceptionPolicy('cancel', { matching: CardDeclinedError });
      // Calling a class without `new` would throw; capturing must not.
      expect(() => policy.captures(new PaymentError())).not.toThrow();
      expect(policy.captures(new PaymentError())).toBe(false);
    });

    it('a predicate is called with the error and its truthiness decides', () => {
      const predicate = jest.fn((error: unknown) =>
        (error as Error).message.includes('timeout') ? 1 : 0,
      );
      const policy = new ExceptionPolicy('reattempt', {
        matching: predicate as unknown as (error: unknown) => boolean,
      });
      const timeout = new Error('socket timeout');
      expect(policy.captures(timeout)).toBe(true);
      expect(predicate).toHaveBeenCalledWith(timeout);
      expect(policy.captures(new Error('boom'))).toBe(false);
    });

    it('a function declared with `function` is a predicate, not a class', () => {
      const policy = new ExceptionPolicy('skip', {
        matching: function isBoom(error: unknown) {
          return (error as Error).message === 'boom';
        },
      });
      expect(policy.captures(new Error('boom'))).toBe(true);
      expect(policy.captures(new Error('other'))).toBe(false);
    });

    it('an array matches when any member does', () => {
      const policy = new ExceptionPolicy('skip', {
        matching: [UnrelatedError, (error) => (error as Error).message === 'special'],
      });
      expect(policy.captures(new UnrelatedError())).toBe(true);
      expect(policy.captures(new Error('special'))).toBe(true);
      expect(policy.captures(new PaymentError('plain'))).toBe(false);
    });
  });

  describe('isErrorClass (SPEC §14.2: prototype is or inherits Error.prototype)', () => {
    it('recognizes Error, built-in and user error classes', () => {
      expect(isErrorClass(Error)).toBe(true);
      expect(isErrorClass(TypeError)).toBe(true);
      expect(isErrorClass(PaymentError)).toBe(true);
      expect(isErrorClass(CardDeclinedError)).toBe(true);
      expect(isErrorClass(StepConfigurationError)).toBe(true);
    });

    it('treats arrow functions, plain functions and non-error classes as predicates', () => {
      expect(isErrorClass(() => true)).toBe(false);
      expect(
        isErrorClass(function predicate() {
          return true;
        }),
      ).toBe(false);
      class NotAnError {}
      expect(isErrorClass(NotAnError as unknown as () => boolean)).toBe(false);
    });
  });
});
