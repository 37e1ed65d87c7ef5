import { StepConfigurationError } from '../../../lib';
import { StateMachine, rejectionOf } from './support/state-machine';
import { Customer, GravestoneWorkflow, LinearWorkflow } from './support/state-machine.workflows';

/** Phase 1 of a step (StepPreparer): the guards, then the preconditions, under the workflow lock. */
describe('state machine: prepare', () => {
  let sm: StateMachine;

  beforeAll(async () => (sm = await StateMachine.boot()));
  afterAll(() => sm.close());

  it('a duplicate job for the same execution is a no-op, delivered concurrently or later', async () => {
    const { workflow, hero } = await sm.start(LinearWorkflow);
    const first = await sm.current(workflow);

    await Promise.all([sm.run(first), sm.run(first), sm.run(first)]);
    await sm.run(first);

    expect(sm.script.callsFor(hero)).toEqual(['a']);
    expect(await sm.trace(workflow)).toEqual(['a:completed/success', 'b:scheduled/null']);
  });

  it('a job of a workflow that is not ready or performing cancels its execution, nothing else', async () => {
    const { workflow, hero } = await sm.start(LinearWorkflow);
    const first = await sm.current(workflow);
    await sm.service.pause(workflow);
    const jobsBefore = sm.jobs().length;

    await sm.run(first);

    expect(sm.script.callsFor(hero)).toEqual([]);
    expect(await sm.trace(workflow)).toEqual(['a:canceled/canceled']);
    const [row] = await sm.history(workflow);
    expect(row.finishedAt).toBeInstanceOf(Date);
    expect((await sm.find(workflow)).state).toBe('paused');
    expect(sm.jobs()).toHaveLength(jobsBefore);
  });

  it('a workflow whose class is no longer registered fails the execution and pauses', async () => {
    const { workflow, hero } = await sm.start(LinearWorkflow);
    const first = await sm.current(workflow);
    await sm.edit(workflow, (tx, locked) =>
      sm.repository.updateWorkflow(tx, locked, { type: 'RetiredWorkflow' }),
    );

    const error = await rejectionOf(sm.run(first));

    expect(error).toBeInstanceOf(StepConfigurationError);
    expect(error.message).toContain("No workflow registered as 'RetiredWorkflow'");
    expect(sm.script.callsFor(hero)).toEqual([]);
    const [row] = await sm.history(workflow);
    expect([row.state, row.outcome, row.errorClassName]).toEqual([
      'failed',
      'failed',
      'StepConfigurationError',
    ]);
    const stored = await sm.find(workflow);
    expect([stored.state, stored.currentStepName]).toEqual(['paused', null]);
    expect(stored.transitionedAt).toBeInstanceOf(Date);
  });

  it('a hero that is gone cancels the execution and the workflow without running the step', async () => {
    const { workflow, hero } = await sm.start(LinearWorkflow);
    sm.repository.removeHero('Customer', hero.id);

    await sm.runCurrent(workflow);

    expect(sm.script.callsFor(hero)).toEqual([]);
    expect(await sm.trace(workflow)).toEqual(['a:canceled/canceled']);
    expect((await sm.find(workflow)).state).toBe('canceled');
  });

  it('an execution of a removed step is skipped and the workflow continues after it', async () => {
    const { workflow, hero } = await sm.start(GravestoneWorkflow);
    // What an in-flight workflow of the previous deploy looks like: parked on `legacy`.
    await sm.edit(workflow, async (tx, locked) => {
      const stale = await sm.repository.currentExecution(tx, locked.id);
      await sm.repository.updateExecution(tx, stale!, { state: 'canceled', outcome: 'canceled' });
      await sm.repository.insertExecution(tx, {
        workflowId: locked.id,
        stepName: 'legacy',
        scheduledFor: new Date(),
      });
      await sm.repository.updateWorkflow(tx, locked, { nextStepName: 'legacy' });
    });

    const legacy = await sm.runCurrent(workflow);

    expect(await sm.trace(workflow)).toEqual([
      'a:canceled/canceled',
      'legacy:skipped/skipped',
      'c:scheduled/null',
    ]);
    const stored = await sm.find(workflow);
    expect([stored.state, stored.nextStepName, stored.currentStepName]).toEqual([
      'ready',
      'c',
      null,
    ]);
    const next = await sm.current(workflow);
    expect(sm.jobsFor(next)).toHaveLength(1);
    expect(sm.jobsFor(legacy)).toHaveLength(0);
    expect(sm.script.callsFor(hero)).toEqual([]);
  });

  it('@CancelIf cancels the execution and the workflow before the body runs', async () => {
    const { workflow, hero } = await sm.start(LinearWorkflow);
    await sm.runCurrent(workflow);
    hero.status = 'void';

    await sm.runCurrent(workflow);

    expect(sm.script.callsFor(hero)).toEqual(['a']);
    expect(await sm.trace(workflow)).toEqual(['a:completed/success', 'b:canceled/canceled']);
    expect((await sm.find(workflow)).state).toBe('canceled');
  });

  it('skipIf skips the step without running it and schedules the next one', async () => {
    const { workflow, hero } = await sm.start(LinearWorkflow, new Customer('skip-b'));
    await sm.runCurrent(workflow);

    const b = await sm.runCurrent(workflow);

    expect(sm.script.callsFor(hero)).toEqual(['a']);
    expect(await sm.trace(workflow)).toEqual([
      'a:completed/success',
      'b:skipped/skipped',
      'c:scheduled/null',
    ]);
    expect((await sm.history(workflow))[1].id).toBe(b.id);
    const stored = await sm.find(workflow);
    expect([stored.state, stored.nextStepName]).toEqual(['ready', 'c']);
    expect(sm.jobsFor(await sm.current(workflow))).toHaveLength(1);
  });
});
