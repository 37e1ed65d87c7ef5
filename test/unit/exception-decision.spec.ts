import type { LoggerService } from '@nestjs/common';
import {
  ExceptionPolicy,
  StepConfigurationError,
  StepExecutionEntity,
  WorkflowEntity,
} from '../../lib';
import type { ExceptionAction, StepContext } from '../../lib';
import { StepCollection } from '../../lib/discovery/step-collection';
import type { StepDefinition } from '../../lib/discovery/step-definition.interface';
import type { WorkflowDefinition } from '../../lib/discovery/workflow-definition.interface';
import { MAX_STORED_TIME } from '../../lib/common/input-guards';
import {
  backoffMs,
  consecutiveReattempts,
  consecutiveReattemptsPaged,
  decide,
  selectPolicy,
} from '../../lib/runner/exception-decision';
import { StepContextImpl } from '../../lib/runner/step-context';

class PaymentError extends Error {}
class CardDeclinedError extends PaymentError {}
class NetworkError extends Error {}

function workflowDefinition(policies: ExceptionPolicy[]): WorkflowDefinition {
  return {
    name: 'W',
    target: class W {},
    instance: {},
    hero: null,
    mayProceedWithoutHero: false,
    stepJobOptions: {},
    policies,
    cancelIfMethods: [],
    steps: new StepCollection([]),
  };
}

function stepDefinition(policies: ExceptionPolicy[] | null): StepDefinition {
  return {
    name: 's',
    kind: 'step',
    methodName: 's',
    waitMs: null,
    waitFor: null,
    timeoutMs: null,
    onTimeout: null,
    skipIf: null,
    policies,
    beforeStep: null,
    afterStep: null,
    jobOptions: {},
    maxIterations: null,
    maxRuntimeMs: null,
  };
}

describe('selectPolicy (SPEC §7)', () => {
  it('falls back to pause when nothing is declared', () => {
    const policy = selectPolicy(new Error('x'), workflowDefinition([]), stepDefinition(null));
    expect(policy).toBeInstanceOf(ExceptionPolicy);
    expect(policy.action).toBe('pause');
    expect(policy.isBlanket).toBe(true);
    expect(policy.report).toBe('always');
    expect(selectPolicy(new Error('x'), workflowDefinition([]), undefined).action).toBe('pause');
  });

  it('prefers the step-level policy over class policies, even specific ones', () => {
    const stepPolicy = new ExceptionPolicy('skip');
    const classSpecific = new ExceptionPolicy('cancel', { matching: PaymentError });
    const chosen = selectPolicy(
      new PaymentError(),
      workflowDefinition([classSpecific]),
      stepDefinition([stepPolicy]),
    );
    expect(chosen).toBe(stepPolicy);
  });

  it('walks a step-level array first-match in order', () => {
    const network = new ExceptionPolicy('reattempt', { matching: NetworkError });
    const payment = new ExceptionPolicy('cancel', { matching: PaymentError });
    const blanket = new ExceptionPolicy('skip');
    const alsoPayment = new ExceptionPolicy('pause', { matching: CardDeclinedError });
    const step = stepDefinition([network, payment, blanket, alsoPayment]);
    const workflow = workflowDefinition([]);
    expect(selectPolicy(new NetworkError(), workflow, step)).toBe(network);
    expect(selectPolicy(new CardDeclinedError(), workflow, step)).toBe(payment);
    expect(selectPolicy(new TypeError(), workflow, step)).toBe(blanket);
  });

  it('falls through to class policies when no step-level policy captures the error', () => {
    const stepPolicy = new ExceptionPolicy('skip', { matching: NetworkError });
    const classPolicy = new ExceptionPolicy('cancel');
    expect(
      selectPolicy(
        new PaymentError(),
        workflowDefinition([classPolicy]),
        stepDefinition([stepPolicy]),
      ),
    ).toBe(classPolicy);
  });

  it('takes the first matching specific class policy in array order, before any blanket', () => {
    const blanket = new ExceptionPolicy('skip');
    const general = new ExceptionPolicy('pause', { matching: PaymentError });
    const narrow = new ExceptionPolicy('cancel', { matching: CardDeclinedError });
    const workflow = workflowDefinition([blanket, general, narrow]);
    // Array order, not specificity: `general` is listed first and matches.
    expect(selectPolicy(new CardDeclinedError(), workflow, undefined)).toBe(general);
    expect(selectPolicy(new CardDeclinedError(), workflow, stepDefinition(null))).toBe(general);
    const reversed = workflowDefinition([narrow, general, blanket]);
    expect(selectPolicy(new CardDeclinedError(), reversed, undefined)).toBe(narrow);
  });

  it('takes the first blanket class policy when no specific one matches', () => {
    const firstBlanket = new ExceptionPolicy('skip');
    const secondBlanket = new ExceptionPolicy('cancel');
    const specific = new ExceptionPolicy('pause', { matching: PaymentError });
    const workflow = workflowDefinition([specific, firstBlanket, secondBlanket]);
    expect(selectPolicy(new NetworkError(), workflow, undefined)).toBe(firstBlanket);
  });

  it('falls back to pause when class policies are all specific and none matches', () => {
    const specific = new ExceptionPolicy('skip', { matching: PaymentError });
    const chosen = selectPolicy(new NetworkError(), workflowDefinition([specific]), undefined);
    expect(chosen).not.toBe(specific);
    expect(chosen.action).toBe('pause');
  });

  it('lets predicates decide captures', () => {
    const byMessage = new ExceptionPolicy('cancel', {
      matching: (error) => (error as Error).message === 'fatal',
    });
    const workflow = workflowDefinition([byMessage]);
    expect(selectPolicy(new Error('fatal'), workflow, undefined)).toBe(byMessage);
    expect(selectPolicy(new Error('minor'), workflow, undefined).action).toBe('pause');
  });
});

describe('consecutiveReattempts (SPEC §13.3)', () => {
  let nextId = 0;

  function execution(
    outcome: StepExecutionEntity['outcome'],
    metadata: Record<string, unknown> | null = null,
  ): StepExecutionEntity {
    nextId += 1;
    return Object.assign(new StepExecutionEntity(), {
      id: `exec-${nextId}`,
      stepName: 's',
      outcome,
      metadata,
    });
  }

  const policyReattempt = (): StepExecutionEntity =>
    execution('reattempted', { reattemptReason: 'exception_policy' });
  const manualReattempt = (): StepExecutionEntity =>
    execution('reattempted', { reattemptReason: 'flow_control' });

  const current = (): StepExecutionEntity => execution(null);

  it('is 0 for the first attempt', () => {
    const now = current();
    expect(consecutiveReattempts(now, [])).toBe(0);
    expect(consecutiveReattempts(now, [now])).toBe(0);
  });

  it('does not count the current execution even when it is listed', () => {
    const now = execution('reattempted', { reattemptReason: 'exception_policy' });
    expect(consecutiveReattempts(now, [now, policyReattempt()])).toBe(1);
  });

  it('counts outcome reattempted back to the last other outcome', () => {
    const now = current();
    const history = [
      now,
      policyReattempt(),
      policyReattempt(),
      execution('success'),
      policyReattempt(),
    ];
    expect(consecutiveReattempts(now, history)).toBe(2);
  });

  it('counts reattempted rows without a reason (rows written before metadata existed)', () => {
    const now = current();
    expect(consecutiveReattempts(now, [execution('reattempted'), execution('reattempted')])).toBe(
      2,
    );
  });

  it("counts prepare-phase rows (failed/failed) whose reason is 'precondition' or 'exception_policy'", () => {
    const now = current();
    const history = [
      execution('failed', { reattemptReason: 'precondition' }),
      execution('reattempted', { reattemptReason: 'precondition' }),
      execution('failed', { reattemptReason: 'exception_policy' }),
      execution('success'),
    ];
    expect(consecutiveReattempts(now, history)).toBe(3);
  });

  it('skips over manual ctx.reattempt() executions without counting or stopping', () => {
    const now = current();
    const history = [
      manualReattempt(),
      policyReattempt(),
      manualReattempt(),
      manualReattempt(),
      policyReattempt(),
      execution('success'),
      policyReattempt(),
    ];
    expect(consecutiveReattempts(now, history)).toBe(2);
  });

  it.each([
    'success',
    'continued',
    'skipped',
    'canceled',
    'failed',
    'recovered',
    'workflow_paused',
  ] as const)("stops at an execution with outcome '%s' and no reattempt reason", (outcome) => {
    const now = current();
    expect(
      consecutiveReattempts(now, [policyReattempt(), execution(outcome), policyReattempt()]),
    ).toBe(1);
  });

  it('stops at an execution carrying reattemptCountReset, counting that execution itself', () => {
    const now = current();
    const resumed = execution('reattempted', {
      reattemptReason: 'exception_policy',
      reattemptCountReset: true,
    });
    const history = [policyReattempt(), resumed, policyReattempt(), policyReattempt()];
    expect(consecutiveReattempts(now, history)).toBe(2);
  });

  it('is 0 when the current execution carries reattemptCountReset (operator resume)', () => {
    const now = execution(null, { reattemptCountReset: true });
    expect(consecutiveReattempts(now, [now, policyReattempt(), policyReattempt()])).toBe(0);
  });

  describe('paged', () => {
    /** A page loader over `history` that records the pages asked for. */
    function pages(history: StepExecutionEntity[]) {
      const asked: Array<[number, number]> = [];
      const load = (offset: number, limit: number) => {
        asked.push([offset, limit]);
        return Promise.resolve(history.slice(offset, offset + limit));
      };
      return { load, asked };
    }

    it('counts across pages, passing over long runs of manual reattempts', async () => {
      const now = current();
      const history = [
        now,
        ...Array.from({ length: 7 }, manualReattempt),
        policyReattempt(),
        ...Array.from({ length: 5 }, manualReattempt),
        policyReattempt(),
        execution('success'),
        policyReattempt(),
      ];
      const { load, asked } = pages(history);
      await expect(consecutiveReattemptsPaged(now, load, 4)).resolves.toBe(
        consecutiveReattempts(now, history),
      );
      expect(consecutiveReattempts(now, history)).toBe(2);
      // The run ends at the 16th row: pages 1–4 of 4, nothing after.
      expect(asked).toEqual([
        [0, 4],
        [4, 4],
        [8, 4],
        [12, 4],
      ]);
    });

    it('stops at the first short page and when the current execution resets the count', async () => {
      const now = current();
      const short = pages([now, policyReattempt()]);
      await expect(consecutiveReattemptsPaged(now, short.load, 4)).resolves.toBe(1);
      expect(short.asked).toEqual([[0, 4]]);

      const reset = execution(null, { reattemptCountReset: true });
      const none = pages([reset, policyReattempt()]);
      await expect(consecutiveReattemptsPaged(reset, none.load, 4)).resolves.toBe(0);
      expect(none.asked).toEqual([]);
    });
  });
});

describe('decide()', () => {
  const error = new Error('boom');
  const logger: LoggerService = { log: jest.fn(), error: jest.fn(), warn: jest.fn() };

  function context(resumable = false): StepContextImpl<unknown> {
    const stepExecution = Object.assign(new StepExecutionEntity(), {
      id: 'exec',
      stepName: 's',
      metadata: null,
    });
    return new StepContextImpl(new WorkflowEntity(), null, stepExecution, null, logger, resumable);
  }

  afterEach(() => jest.restoreAllMocks());

  describe('declarative policies', () => {
    it.each(['pause', 'cancel', 'skip'] as const)("gives '%s' with no wait", async (action) => {
      await expect(decide(new ExceptionPolicy(action), error, 0, {}, context())).resolves.toEqual({
        action,
        waitMs: null,
        report: true,
      });
    });

    it('reattempts now when the policy has no wait', async () => {
      await expect(
        decide(new ExceptionPolicy('reattempt'), error, 0, {}, context()),
      ).resolves.toEqual({ action: 'reattempt', waitMs: null, report: true });
    });

    it('reattempts with the policy wait', async () => {
      const policy = new ExceptionPolicy('reattempt', { wait: '30s' });
      await expect(decide(policy, error, 5, {}, context())).resolves.toMatchObject({
        action: 'reattempt',
        waitMs: 30_000,
      });
    });

    it('passes the 1-based attempt number (prior + 1) to the backoff', async () => {
      jest.spyOn(Math, 'random').mockReturnValue(0);
      const strategy = jest.fn((attempt: number) => attempt * 1000);
      const policy = new ExceptionPolicy('reattempt', { wait: strategy });
      await expect(decide(policy, error, 0, {}, context())).resolves.toMatchObject({
        waitMs: 1000,
      });
      expect(strategy).toHaveBeenLastCalledWith(1);
      await expect(decide(policy, error, 2, {}, context())).resolves.toMatchObject({
        waitMs: 3000,
      });
      expect(strategy).toHaveBeenLastCalledWith(3);
      const exponential = new ExceptionPolicy('reattempt', { wait: 'exponential' });
      await expect(decide(exponential, error, 2, {}, context())).resolves.toMatchObject({
        waitMs: 8000,
      });
    });

    it('applies the default jitter of a named strategy', async () => {
      jest.spyOn(Math, 'random').mockReturnValue(0.5);
      const policy = new ExceptionPolicy('reattempt', { wait: 'exponential' });
      // attempt 1: 2000 ms + 0.5 × 0.15 × 2000
      await expect(decide(policy, error, 0, {}, context())).resolves.toMatchObject({
        waitMs: 2150,
      });
    });

    it('reattempts until maxReattempts, then gives the terminal action with no wait', async () => {
      const policy = new ExceptionPolicy('reattempt', { maxReattempts: 3, wait: '1s' });
      for (const prior of [0, 1, 2]) {
        await expect(decide(policy, error, prior, {}, context())).resolves.toMatchObject({
          action: 'reattempt',
          waitMs: 1000,
        });
      }
      for (const prior of [3, 4]) {
        await expect(decide(policy, error, prior, {}, context())).resolves.toEqual({
          action: 'pause',
          waitMs: null,
          report: true,
        });
      }
    });

    it.each(['cancel', 'skip', 'pause'] as const)(
      "gives terminalAction '%s' once exhausted",
      async (terminalAction) => {
        const policy = new ExceptionPolicy('reattempt', { maxReattempts: 1, terminalAction });
        await expect(decide(policy, error, 1, {}, context())).resolves.toMatchObject({
          action: terminalAction,
        });
      },
    );

    it('uses the default limit of 100', async () => {
      const policy = new ExceptionPolicy('reattempt');
      await expect(decide(policy, error, 99, {}, context())).resolves.toMatchObject({
        action: 'reattempt',
      });
      await expect(decide(policy, error, 100, {}, context())).resolves.toMatchObject({
        action: 'pause',
      });
    });

    it('never exhausts with maxReattempts: null', async () => {
      const policy = new ExceptionPolicy('reattempt', { maxReattempts: null });
      await expect(decide(policy, error, 1_000_000, {}, context())).resolves.toMatchObject({
        action: 'reattempt',
      });
    });

    describe('a reattempt due after 9999-12-31 (SPEC §16.1) is refused like a failing handler', () => {
      const LIMIT =
        /after 9999-12-31T23:59:59\.999Z: the library stores dates from 0001-01-01 to 9999-12-31 \(UTC\) only\. Cap the wait \(or set maxReattempts\)/;

      async function refusal(
        policy: ExceptionPolicy,
        prior: number,
      ): Promise<StepConfigurationError> {
        const outcome = await decide(policy, error, prior, {}, context()).then(
          (decision) => decision,
          (thrown: unknown) => thrown,
        );
        expect(outcome).toBeInstanceOf(StepConfigurationError);
        expect((outcome as Error).message).toMatch(LIMIT);
        return outcome as StepConfigurationError;
      }

      it('rejects when a backoff strategy returns a wait that ends after 9999-12-31, naming it, its result and the attempt', async () => {
        const attempts: number[] = [];
        function growing(attempt: number): string {
          attempts.push(attempt);
          return attempt < 3 ? '1h' : '500000 weeks';
        }
        const policy = new ExceptionPolicy('reattempt', { wait: growing });
        await expect(decide(policy, error, 1, {}, context())).resolves.toMatchObject({
          action: 'reattempt',
          waitMs: 3_600_000,
        });
        const { message } = await refusal(policy, 2);
        expect(message).toMatch(
          /^ExceptionPolicy backoff strategy function growing returned '500000 weeks' for reattempt 3, which would make the step due on \+011\d{3}-/,
        );
        // Called once per decision: the refused result is the one it returned.
        expect(attempts).toEqual([2, 3]);
      });

      it('rejects a strategy result in milliseconds beyond the range of a Date', async () => {
        const policy = new ExceptionPolicy('reattempt', { wait: () => 1e20 });
        const { message } = await refusal(policy, 0);
        expect(message).toMatch(
          /returned 100000000000000000000 for reattempt 1, which would make the step due beyond the range of a JavaScript Date/,
        );
      });

      it("rejects once 'exponential' has grown past 9999-12-31 with maxReattempts: null", async () => {
        jest.spyOn(Math, 'random').mockReturnValue(0);
        const policy = new ExceptionPolicy('reattempt', {
          wait: 'exponential',
          maxReattempts: null,
        });
        // 2^30 s is about 34 years from now; 2^40 s about 34,800 years.
        await expect(decide(policy, error, 29, {}, context())).resolves.toMatchObject({
          action: 'reattempt',
          waitMs: 2 ** 30 * 1000,
        });
        const { message } = await refusal(policy, 39);
        expect(message).toMatch(
          /^ExceptionPolicy wait 'exponential' gives reattempt 40 a delay of 1099511627776000 ms, which would make the step due on \+\d{6}-/,
        );
        await refusal(policy, 5000);
      });

      it('rejects a plain wait that no longer ends by 9999-12-31 (the check is made at each decision)', async () => {
        const policy = new ExceptionPolicy('reattempt', { wait: '2 weeks' });
        jest.spyOn(Date, 'now').mockReturnValue(MAX_STORED_TIME - 7 * 24 * 3600 * 1000);
        const { message } = await refusal(policy, 0);
        expect(message).toMatch(/^ExceptionPolicy wait '2 weeks' gives reattempt 1 a delay of/);
      });

      it('still gives the terminal action once exhausted, without asking the strategy', async () => {
        const strategy = jest.fn(() => '500000 weeks');
        const policy = new ExceptionPolicy('reattempt', { wait: strategy, maxReattempts: 2 });
        await expect(decide(policy, error, 2, {}, context())).resolves.toMatchObject({
          action: 'pause',
        });
        expect(strategy).not.toHaveBeenCalled();
      });
    });

    describe('report modes', () => {
      type Case = [ExceptionAction, 'always' | 'never' | 'terminalOnly', number, boolean];
      it.each<Case>([
        ['pause', 'always', 0, true],
        ['pause', 'never', 0, false],
        ['pause', 'terminalOnly', 0, false],
        ['cancel', 'terminalOnly', 0, false],
        ['reattempt', 'always', 0, true],
        ['reattempt', 'never', 0, false],
        ['reattempt', 'terminalOnly', 0, false],
        ['reattempt', 'always', 2, true],
        ['reattempt', 'never', 2, false],
        ['reattempt', 'terminalOnly', 2, true],
      ])(
        "'%s' with report '%s' after %p reattempts (limit 2) reports: %p",
        async (action, report, prior, reported) => {
          const policy =
            action === 'reattempt'
              ? new ExceptionPolicy(action, { report, maxReattempts: 2 })
              : new ExceptionPolicy(action, { report });
          await expect(decide(policy, error, prior, {}, context())).resolves.toMatchObject({
            report: reported,
          });
        },
      );
    });
  });

  describe('imperative policies', () => {
    it('calls the handler with the error and ctx, with this bound to the workflow instance', async () => {
      const instance = { label: 'workflow instance' };
      const ctx = context();
      const handler = jest.fn();
      await decide(new ExceptionPolicy({ handler }), error, 0, instance, ctx);
      expect(handler).toHaveBeenCalledWith(error, ctx);
      expect(handler.mock.contexts[0]).toBe(instance);
    });

    it('pauses when the handler calls no verb', async () => {
      const policy = new ExceptionPolicy({ handler: () => undefined });
      await expect(decide(policy, error, 0, {}, context())).resolves.toEqual({
        action: 'pause',
        waitMs: null,
        report: true,
      });
    });

    it.each([
      ['cancel', (ctx: StepContext) => ctx.cancel()],
      ['skip', (ctx: StepContext) => ctx.skip()],
      ['finish', (ctx: StepContext) => ctx.finish()],
      ['pause', (ctx: StepContext) => ctx.pause()],
    ] as const)("gives '%s' when the handler calls that verb", async (action, verb) => {
      const policy = new ExceptionPolicy({ handler: (_error, ctx) => verb(ctx) });
      await expect(decide(policy, error, 0, {}, context())).resolves.toMatchObject({
        action,
        waitMs: null,
      });
    });

    it('gives a reattempt with the wait the handler asked for', async () => {
      const policy = new ExceptionPolicy({
        handler: (_error, ctx) => ctx.reattempt({ wait: '5s' }),
      });
      await expect(decide(policy, error, 0, {}, context())).resolves.toMatchObject({
        action: 'reattempt',
        waitMs: 5000,
      });
      const now = new ExceptionPolicy({ handler: (_error, ctx) => ctx.reattempt() });
      await expect(decide(now, error, 0, {}, context())).resolves.toMatchObject({
        action: 'reattempt',
        waitMs: null,
      });
    });

    it('treats suspend in a resumable step as a reattempt with its wait', async () => {
      const policy = new ExceptionPolicy({ handler: (_error, ctx) => ctx.suspend({ wait: '1m' }) });
      await expect(decide(policy, error, 0, {}, context(true))).resolves.toMatchObject({
        action: 'reattempt',
        waitMs: 60_000,
      });
    });

    it('honors a verb the handler swallowed', async () => {
      const policy = new ExceptionPolicy({
        handler: (_error, ctx) => {
          try {
            ctx.skip();
          } catch {
            // swallowed on purpose
          }
          return 'ignored';
        },
      });
      await expect(decide(policy, error, 0, {}, context())).resolves.toMatchObject({
        action: 'skip',
      });
    });

    it('awaits an async handler', async () => {
      const policy = new ExceptionPolicy({
        handler: async (_error, ctx) => {
          await Promise.resolve();
          ctx.cancel();
        },
      });
      await expect(decide(policy, error, 0, {}, context())).resolves.toMatchObject({
        action: 'cancel',
      });
    });

    it('lets an error thrown by the handler propagate', async () => {
      const policy = new ExceptionPolicy({
        handler: () => {
          throw new Error('handler broke');
        },
      });
      await expect(decide(policy, error, 0, {}, context())).rejects.toThrow('handler broke');
    });

    it('is not limited by the reattempt count', async () => {
      const policy = new ExceptionPolicy({ handler: (_error, ctx) => ctx.reattempt() });
      await expect(decide(policy, error, 10_000, {}, context())).resolves.toMatchObject({
        action: 'reattempt',
      });
    });

    it.each([
      ['always', true],
      ['never', false],
      ['terminalOnly', false],
    ] as const)(
      "reports with '%s': %p (an imperative decision is never terminal)",
      async (report, reported) => {
        const policy = new ExceptionPolicy({ handler: (_error, ctx) => ctx.cancel(), report });
        await expect(decide(policy, error, 0, {}, context())).resolves.toMatchObject({
          report: reported,
        });
      },
    );
  });
});

describe('backoffMs (SPEC §14.4)', () => {
  afterEach(() => jest.restoreAllMocks());

  it('is null without a wait', () => {
    expect(backoffMs(null, 0, 1)).toBeNull();
  });

  it('gives a plain duration as is, without jitter', () => {
    const random = jest.spyOn(Math, 'random').mockReturnValue(0.99);
    expect(backoffMs('5s', 0.5, 3)).toBe(5000);
    expect(backoffMs(750, 1, 1)).toBe(750);
    expect(random).not.toHaveBeenCalled();
  });

  it.each([
    [1, 2000],
    [2, 4000],
    [3, 8000],
    [4, 16_000],
    [10, 1_024_000],
  ])("'exponential' attempt %p is 2^attempt s = %p ms", (attempt, ms) => {
    expect(backoffMs('exponential', 0, attempt)).toBe(ms);
  });

  it.each([
    [1, 3000],
    [2, 18_000],
    [3, 83_000],
    [4, 258_000],
  ])("'polynomial' attempt %p is attempt^4 + 2 s = %p ms", (attempt, ms) => {
    expect(backoffMs('polynomial', 0, attempt)).toBe(ms);
  });

  it('calls a strategy function with the attempt and parses its duration', () => {
    const strategy = jest.fn((attempt: number) => `${attempt}m`);
    expect(backoffMs(strategy, 0, 3)).toBe(180_000);
    expect(strategy).toHaveBeenCalledWith(3);
    expect(backoffMs(() => 1234, 0, 1)).toBe(1234);
  });

  it('throws when a strategy function returns something that is not a duration', () => {
    expect(() => backoffMs(() => 'soon', 0, 1)).toThrow(
      /backoff strategy result is not a duration/,
    );
    expect(() => backoffMs(() => -5, 0, 1)).toThrow(TypeError);
  });

  describe('jitter adds uniform [0, jitter × d)', () => {
    it('adds nothing when Math.random() is 0', () => {
      jest.spyOn(Math, 'random').mockReturnValue(0);
      expect(backoffMs('exponential', 0.5, 1)).toBe(2000);
    });

    it('adds random × jitter × d', () => {
      jest.spyOn(Math, 'random').mockReturnValue(0.5);
      expect(backoffMs('exponential', 0.2, 1)).toBe(2200);
      expect(backoffMs('polynomial', 0.1, 1)).toBe(3150);
      expect(backoffMs(() => 10_000, 1, 1)).toBe(15_000);
    });

    it('stays below d × (1 + jitter)', () => {
      jest.spyOn(Math, 'random').mockReturnValue(0.999_999);
      const ms = backoffMs('exponential', 0.15, 3)!;
      expect(ms).toBeGreaterThanOrEqual(8000);
      expect(ms).toBeLessThanOrEqual(8000 * 1.15);
    });

    it('adds nothing with jitter 0 whatever Math.random() gives', () => {
      jest.spyOn(Math, 'random').mockReturnValue(0.9);
      expect(backoffMs('polynomial', 0, 2)).toBe(18_000);
    });

    it('gives whole milliseconds', () => {
      jest.spyOn(Math, 'random').mockReturnValue(0.123_456);
      expect(Number.isInteger(backoffMs('exponential', 0.15, 1))).toBe(true);
    });
  });
});
