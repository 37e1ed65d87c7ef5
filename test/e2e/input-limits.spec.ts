import type { LoggerService } from '@nestjs/common';
import { InvalidArgumentError, type StepExecutionEntity } from '../../lib';
import { MAX_STORED_TIME } from '../../lib/common/input-guards';
import {
  BackoffInputLimitsWorkflow,
  FlakyStepError,
  InputLimitsWorkflow,
  ResumableInputLimitsWorkflow,
  inputLimitScript,
} from '../fixtures/input-limits.workflows';
import { testDatabaseLabel } from './support/database';
import { EngineHarness } from './support/engine-harness';
import { ReportedErrors } from './support/reported-errors';

/**
 * SPEC §16.1 inside a step: a value the database cannot store, handed to a step-side entry point,
 * throws InvalidArgumentError from that call, so the step's exception policy (here the default,
 * pause) handles it like any other error: the execution ends failed/failed with the error's class
 * and message, the workflow pauses, and nothing is left `in_progress`/`performing`. Without the
 * checks a BigInt in `ctx.metadata.set()` failed the finalize and a wait past year 9999 broke the
 * successor's `scheduled_for`, leaving the workflow `performing` for good.
 */
describe(`bad values inside a step are handled by the exception policy (${testDatabaseLabel} + BullMQ)`, () => {
  let harness: EngineHarness;
  const errorLogs: string[] = [];
  const reported = new ReportedErrors();
  const logger: LoggerService = {
    log: () => undefined,
    warn: () => undefined,
    error: (message: unknown) => void errorLogs.push(String(message)),
  };

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [InputLimitsWorkflow, ResumableInputLimitsWorkflow, BackoffInputLimitsWorkflow],
      options: { logger, errorReporter: reported.reporter },
    });
  });

  afterAll(async () => {
    await harness?.close();
  });

  /** Starts `workflow`, waits for it to pause, and resolves its only execution. */
  async function pausedExecution(
    workflow: typeof InputLimitsWorkflow | typeof ResumableInputLimitsWorkflow,
  ): Promise<StepExecutionEntity> {
    const started = await harness.service.start(workflow);
    await harness.waitForState(started.id, 'paused');
    const history = await harness.history(started.id);
    expect(history).toHaveLength(1);
    expect(await harness.service.currentExecution(started.id)).toBeNull();
    return history[0];
  }

  function expectFailedWith(execution: StepExecutionEntity, message: RegExp): void {
    expect([execution.state, execution.outcome]).toEqual(['failed', 'failed']);
    expect(execution.errorClassName).toBe(InvalidArgumentError.name);
    expect(execution.errorMessage).toMatch(message);
    expect((execution.metadata?.exception as { class?: string } | undefined)?.class).toBe(
      'InvalidArgumentError',
    );
  }

  it.each([
    ['a BigInt', 10n, /^ctx\.metadata\.set\(\) metadata\.x is a BigInt \(10n\)/],
    ['NaN', NaN, /^ctx\.metadata\.set\(\) metadata\.x is NaN, which JSON cannot represent/],
    [
      'a Date after 9999',
      new Date(MAX_STORED_TIME + 1),
      /^ctx\.metadata\.set\(\) metadata\.x is Date\(\+010000-01-01T00:00:00\.000Z\), outside years 1–9999/,
    ],
  ])(
    "ctx.metadata.set('x', %s): paused, execution failed with InvalidArgumentError, the good keys kept",
    async (_label, value, message) => {
      inputLimitScript.body = (ctx) => {
        ctx.metadata.set('kept', 1);
        ctx.metadata.set('x', value);
      };
      const execution = await pausedExecution(InputLimitsWorkflow);
      expectFailedWith(execution, message);
      expect(execution.stepName).toBe('body');
      expect(execution.metadata?.user).toStrictEqual({ kept: 1 });
    },
  );

  it("ctx.reattempt({ wait: '500000 weeks' }): paused, execution failed with InvalidArgumentError, no successor", async () => {
    inputLimitScript.body = (ctx) => ctx.reattempt({ wait: '500000 weeks' });
    const execution = await pausedExecution(InputLimitsWorkflow);
    expectFailedWith(
      execution,
      /^ctx\.reattempt\(\{ wait \}\) is '500000 weeks', which would make the step due on \+\d{6}-.*, after 9999-12-31T23:59:59\.999Z/,
    );
  });

  it("ctx.suspend({ wait: '500000 weeks' }) in a resumable step: paused, execution failed with InvalidArgumentError", async () => {
    inputLimitScript.walk = (_iter, ctx) => ctx.suspend({ wait: '500000 weeks' });
    const execution = await pausedExecution(ResumableInputLimitsWorkflow);
    expectFailedWith(execution, /^ctx\.suspend\(\{ wait \}\) is '500000 weeks', which would make/);
  });

  it("iter.skipTo(5, { wait: '500000 weeks' }): paused, execution failed with InvalidArgumentError, the cursor not moved", async () => {
    inputLimitScript.walk = async (iter) => {
      await iter.set(2);
      await iter.skipTo(5, { wait: '500000 weeks' });
    };
    const execution = await pausedExecution(ResumableInputLimitsWorkflow);
    expectFailedWith(execution, /^skipTo\(\{ wait \}\) is '500000 weeks', which would make/);
    expect(execution.cursor).toBe(2);
  });

  it("a backoff strategy returning '500000 weeks': treated as a failing handler, so paused with the step's error, not stuck performing", async () => {
    const attempts: number[] = [];
    inputLimitScript.backoff = (attempt) => {
      attempts.push(attempt);
      return attempt === 1 ? 0 : '500000 weeks';
    };
    const started = await harness.service.start(BackoffInputLimitsWorkflow);
    await harness.waitForState(started.id, 'paused');
    expect(attempts).toEqual([1, 2]);
    const [first, second] = await harness.history(started.id);
    expect([first.state, first.outcome]).toEqual(['completed', 'reattempted']);
    // The policy could not reattempt: the execution failed with the step's own error recorded.
    expect([second.state, second.outcome]).toEqual(['failed', 'failed']);
    expect(second.stepName).toBe('flaky');
    expect(second.errorClassName).toBe(FlakyStepError.name);
    expect(second.errorMessage).toBe('the flaky step failed');
    expect((await harness.history(started.id)).length).toBe(2);
    expect(await harness.service.currentExecution(started.id)).toBeNull();
    // Why it paused is logged; the step's error is reported as a pause is.
    expect(errorLogs).toContainEqual(
      expect.stringMatching(
        /\] Exception handler threw: StepConfigurationError: ExceptionPolicy backoff strategy function scriptedBackoff returned '500000 weeks' for reattempt 2, which would make the step due on \+\d{6}-.*after 9999-12-31T23:59:59\.999Z.*; pausing$/,
      ),
    );
    const flaky = await reported.waitFor(({ error }) => error instanceof FlakyStepError, 2);
    expect(flaky).toHaveLength(2);
    // Not stuck: resume() runs the step again (the reattempt count starts over, so the strategy
    // is asked for reattempt 1 and then 2 again) and the workflow pauses the same way.
    await harness.service.resume(started.id);
    await harness.waitForWorkflow(
      started.id,
      async (workflow) =>
        workflow.state === 'paused' && (await harness.history(started.id)).length === 4,
    );
    expect(attempts).toEqual([1, 2, 1, 2]);
    const last = (await harness.history(started.id))[3];
    expect([last.state, last.outcome, last.errorClassName]).toEqual([
      'failed',
      'failed',
      FlakyStepError.name,
    ]);
  });

  it('accepted: a long wait that ends by 9999 schedules the successor then, and the last storable Date is kept', async () => {
    const last = new Date(MAX_STORED_TIME);
    inputLimitScript.body = (ctx) => {
      ctx.metadata.set('last', last);
      ctx.reattempt({ wait: '1000 weeks' });
    };
    const before = Date.now();
    const started = await harness.service.start(InputLimitsWorkflow);
    await harness.waitForWorkflow(
      started.id,
      async () => (await harness.history(started.id)).length === 2,
    );
    const [first, successor] = await harness.history(started.id);
    expect([first.state, first.outcome]).toEqual(['completed', 'reattempted']);
    expect(first.metadata?.user).toStrictEqual({ last: last.toISOString() });
    expect(successor.state).toBe('scheduled');
    const weeks = 1000 * 7 * 24 * 3600 * 1000;
    expect(successor.scheduledFor.getTime()).toBeGreaterThanOrEqual(before + weeks);
    expect(successor.scheduledFor.getTime()).toBeLessThan(Date.now() + weeks + 1000);
    expect((await harness.service.find(started.id))?.state).toBe('ready');
    await harness.service.cancel(started);
  });
});
