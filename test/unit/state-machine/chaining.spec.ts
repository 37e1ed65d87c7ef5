import type { Type } from '@nestjs/common';
import type { WorkflowEntity } from '../../../lib';
import { StateMachine } from './support/state-machine';
import {
  DelayedNextWorkflow,
  LinearWorkflow,
  PaymentWorkflow,
} from './support/state-machine.workflows';

/**
 * In-process step chaining (StepChain through WorkflowRunner.performJob): a worker runs the next
 * step in the same job when it qualifies (due now, same queue and priority, no signal to wait
 * for, within the limits), and enqueues it otherwise.
 */
describe('state machine: step chaining', () => {
  let sm: StateMachine;
  const slot = { queue: 'geneva-drive', priority: undefined };

  beforeAll(async () => (sm = await StateMachine.boot()));
  afterAll(() => sm.close());

  async function runJob(workflowClass: Type<object>) {
    const started = await sm.start(workflowClass);
    const first = await sm.current(started.workflow);
    await sm.runner.performJob(
      { stepExecutionId: first.id, workflowId: started.workflow.id },
      slot,
    );
    return started;
  }

  /** The steps that got a job of their own, in order. */
  async function stepsWithJobs(workflow: WorkflowEntity): Promise<string[]> {
    const history = await sm.history(workflow);
    return history.filter((e) => sm.jobsFor(e).length > 0).map((e) => e.stepName);
  }

  it('runs each following immediate step in the same job, with one execution each', async () => {
    const { workflow, hero } = await runJob(LinearWorkflow);

    expect(sm.script.callsFor(hero)).toEqual(['a', 'b', 'c']);
    expect(await sm.trace(workflow)).toEqual([
      'a:completed/success',
      'b:completed/success',
      'c:completed/success',
    ]);
    expect(await stepsWithJobs(workflow)).toEqual(['a']);
    expect((await sm.find(workflow)).state).toBe('finished');
    const history = await sm.history(workflow);
    for (let i = 1; i < history.length; i++) {
      expect(history[i].startedAt!.getTime()).toBeGreaterThanOrEqual(
        history[i - 1].finishedAt!.getTime(),
      );
    }
  });

  it('enqueues a next step that is due later instead of running it', async () => {
    const before = Date.now();
    const { workflow, hero } = await runJob(DelayedNextWorkflow);

    expect(sm.script.callsFor(hero)).toEqual(['one']);
    expect(await sm.trace(workflow)).toEqual(['one:completed/success', 'later:scheduled/null']);
    const later = await sm.current(workflow);
    expect(later.scheduledFor.getTime()).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(sm.jobsFor(later)).toEqual([expect.objectContaining({ delay: expect.any(Number) })]);
    expect(sm.jobsFor(later)[0].delay).toBeGreaterThan(3_590_000);
  });

  it('enqueues a next step that waits for a signal instead of running (or parking) it', async () => {
    const { workflow, hero } = await runJob(PaymentWorkflow);

    expect(sm.script.callsFor(hero)).toEqual(['prepare']);
    expect(await sm.trace(workflow)).toEqual([
      'prepare:completed/success',
      'capture:scheduled/null',
    ]);
    expect(await stepsWithJobs(workflow)).toEqual(['prepare', 'capture']);
  });

  it('stops chaining at maxChainedSteps and enqueues the rest', async () => {
    const limited = await StateMachine.boot({ maxChainedSteps: 1 });
    try {
      const { workflow, hero } = await limited.start(LinearWorkflow);
      const first = await limited.current(workflow);
      await limited.runner.performJob({ stepExecutionId: first.id, workflowId: workflow.id }, slot);

      expect(limited.script.callsFor(hero)).toEqual(['a', 'b']);
      expect(await limited.trace(workflow)).toEqual([
        'a:completed/success',
        'b:completed/success',
        'c:scheduled/null',
      ]);
      const c = await limited.current(workflow);
      expect(limited.jobsFor(c)).toHaveLength(1);
    } finally {
      await limited.close();
    }
  });
});
