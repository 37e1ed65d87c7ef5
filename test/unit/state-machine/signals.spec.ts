import { StateMachine, rejectionOf } from './support/state-machine';
import { PaymentWorkflow, TwoApprovalsWorkflow } from './support/state-machine.workflows';

/**
 * The signal rendezvous (SignalRendezvous, SignalSender): a `waitFor` step's gate claims a
 * buffered signal or parks; a delivery wakes a parked execution; a clean end settles the signal.
 */
describe('state machine: signal gate and settlement', () => {
  let sm: StateMachine;

  beforeAll(async () => (sm = await StateMachine.boot()));
  afterAll(() => sm.close());

  /** A PaymentWorkflow whose `prepare` has run: `capture` is scheduled, not yet at its gate. */
  async function atCapture() {
    const started = await sm.start(PaymentWorkflow);
    await sm.runCurrent(started.workflow);
    return { ...started, capture: await sm.current(started.workflow) };
  }

  it('a signal sent before the step reaches its gate is buffered, then claimed at the gate', async () => {
    const { workflow, hero, capture } = await atCapture();

    const sent = await sm.service.signal(workflow, 'payment', { payload: { amount: 42 } });
    expect([sent.state, sent.claimed, sent.consumed]).toEqual(['pending', 0, 0]);
    expect(sm.jobsFor(capture)).toHaveLength(1);

    await sm.run(capture);

    expect(sm.script.payloadsFor(hero)).toEqual([undefined, { amount: 42 }]);
    expect(await sm.trace(workflow)).toEqual([
      'prepare:completed/success',
      'capture:completed/success',
      'ship:scheduled/null',
    ]);
    expect((await sm.history(workflow))[1].signalId).toBe(sent.id);
    const [signal] = await sm.signals(workflow);
    expect([signal.state, signal.claimed, signal.consumed]).toEqual(['consumed', 1, 1]);
    expect(signal.claimedAt).toBeInstanceOf(Date);
    expect(signal.consumedAt).toBeInstanceOf(Date);
  });

  it('a step with no signal parks without a job; signal() wakes it with a fresh job id', async () => {
    const { workflow, hero, capture } = await atCapture();

    await sm.run(capture);
    const parked = await sm.current(workflow);
    expect([parked.id, parked.state, parked.outcome]).toEqual([capture.id, 'waiting', null]);
    expect(parked.waitingSince).toBeInstanceOf(Date);
    expect(sm.jobsFor(capture).map((job) => job.jobId)).toEqual([capture.id]);
    expect(sm.script.callsFor(hero)).toEqual(['prepare']);

    const sent = await sm.service.signal(workflow, 'payment', { payload: { amount: 7 } });

    expect([sent.state, sent.claimed, sent.consumed]).toEqual(['claimed', 1, 0]);
    const woken = await sm.current(workflow);
    expect([woken.id, woken.state, woken.signalId, woken.waitingSince, woken.jobId]).toEqual([
      capture.id,
      'scheduled',
      sent.id,
      null,
      `${capture.id}_1`,
    ]);
    expect(sm.jobsFor(capture).map((job) => job.jobId)).toEqual([capture.id, `${capture.id}_1`]);

    await sm.run(woken);

    expect(sm.script.payloadsFor(hero)).toEqual([undefined, { amount: 7 }]);
    const [signal] = await sm.signals(workflow);
    expect([signal.state, signal.claimed, signal.consumed]).toEqual(['consumed', 1, 1]);
    expect(await sm.trace(workflow)).toEqual([
      'prepare:completed/success',
      'capture:completed/success',
      'ship:scheduled/null',
    ]);
  });

  it('buffered signals are claimed oldest first, one per waiting step (FIFO)', async () => {
    const { workflow, hero } = await sm.start(TwoApprovalsWorkflow);
    const older = await sm.service.signal(workflow, 'approval', { payload: { n: 1 } });
    const newer = await sm.service.signal(workflow, 'approval', { payload: { n: 2 } });

    await sm.runCurrent(workflow);
    await sm.runCurrent(workflow);

    expect(sm.script.payloadsFor(hero)).toEqual([{ n: 1 }, { n: 2 }]);
    expect((await sm.history(workflow)).map((e) => e.signalId)).toEqual([older.id, newer.id]);
    expect((await sm.signals(workflow)).map((s) => [s.id, s.state, s.claimed, s.consumed])).toEqual(
      [
        [older.id, 'consumed', 1, 1],
        [newer.id, 'consumed', 1, 1],
      ],
    );
    expect((await sm.find(workflow)).state).toBe('finished');
  });

  it('a redelivery with the same idempotency key returns the first row and wakes nothing', async () => {
    const { workflow, capture } = await atCapture();
    await sm.run(capture);
    const first = await sm.service.signal(workflow, 'payment', {
      payload: { amount: 1 },
      idempotencyKey: 'charge-1',
    });

    const again = await sm.service.signal(workflow, 'payment', {
      payload: { amount: 999 },
      idempotencyKey: 'charge-1',
    });

    expect(again.id).toBe(first.id);
    expect(again.duplicateDelivery).toBe(true);
    expect(again.payload).toEqual({ amount: 1 });
    const signals = await sm.signals(workflow);
    expect(signals.map((s) => [s.claimed, s.consumed, s.duplicateDelivery])).toEqual([
      [1, 0, false],
    ]);
    expect(sm.jobsFor(capture)).toHaveLength(2);
  });

  it('a signal to a paused workflow is buffered; resume() runs the rendezvous again', async () => {
    const { workflow, capture } = await atCapture();
    await sm.run(capture);
    await sm.service.pause(workflow);

    const sent = await sm.service.signal(workflow, 'payment');
    expect(sent.state).toBe('pending');
    expect((await sm.current(workflow)).state).toBe('waiting');

    await sm.service.resume(workflow);

    const woken = await sm.current(workflow);
    expect([woken.state, woken.signalId]).toEqual(['scheduled', sent.id]);
    const [signal] = await sm.signals(workflow);
    expect([signal.state, signal.claimed, signal.consumed]).toEqual(['claimed', 1, 0]);
  });

  it('skip() of a workflow paused by a failed step settles the signal that step claimed, by decree', async () => {
    const { workflow, hero, capture } = await atCapture();
    sm.script.plan(hero, {
      capture: () => {
        throw new Error('capture failed');
      },
    });
    await sm.service.signal(workflow, 'payment');
    await rejectionOf(sm.run(capture));
    const [claimed] = await sm.signals(workflow);
    expect([claimed.state, claimed.claimed, claimed.consumed]).toEqual(['claimed', 1, 0]);
    expect((await sm.find(workflow)).state).toBe('paused');

    await sm.service.skip(workflow);

    // The step's only execution failed, yet skipping the step resolves it.
    const [signal] = await sm.signals(workflow);
    expect([signal.state, signal.claimed, signal.consumed]).toEqual(['consumed', 1, 1]);
    expect(await sm.trace(workflow)).toEqual([
      'prepare:completed/success',
      'capture:failed/failed',
      'ship:scheduled/null',
    ]);
  });

  it('a step that skips settles its signal', async () => {
    const { workflow, hero, capture } = await atCapture();
    sm.script.plan(hero, { capture: (ctx) => ctx.skip() });
    await sm.service.signal(workflow, 'payment');

    await sm.run(capture);

    expect(await sm.trace(workflow)).toEqual([
      'prepare:completed/success',
      'capture:skipped/skipped',
      'ship:scheduled/null',
    ]);
    const [signal] = await sm.signals(workflow);
    expect([signal.state, signal.claimed, signal.consumed]).toEqual(['consumed', 1, 1]);
  });
});
