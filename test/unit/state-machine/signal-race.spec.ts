import { StateMachine } from './support/state-machine';
import { PaymentWorkflow } from './support/state-machine.workflows';

const ROUNDS = 20;

/** Lets `count` turns of the microtask queue pass, to shift where two transactions interleave. */
async function yieldTurns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn++) await Promise.resolve();
}

/**
 * signal() racing the step's gate: both run under the workflow row lock, so whichever takes it
 * first decides, and exactly one of two outcomes happens — the gate claims the buffered signal
 * and the step runs, or the step parks and the delivery wakes it. Never both, never neither (a
 * parked execution with a pending signal is a lost wake-up). Raced for real, many times.
 */
describe('state machine: signal() racing the step parking', () => {
  let sm: StateMachine;

  beforeAll(async () => (sm = await StateMachine.boot()));
  afterAll(() => sm.close());

  it(`exactly one outcome in each of ${ROUNDS} rounds`, async () => {
    const outcomes = { claimedAtGate: 0, wokenAfterParking: 0 };

    for (let round = 0; round < ROUNDS; round++) {
      const { workflow, hero } = await sm.start(PaymentWorkflow);
      await sm.runCurrent(workflow);
      const capture = await sm.current(workflow);

      // From one round to the next, one side or the other starts a few turns later: the rounds
      // sweep the window in which the two transactions overlap (without the row locks, about
      // half of them lose the wake-up).
      const headStart = round - 5;
      const [, sent] = await Promise.all([
        yieldTurns(Math.max(0, -headStart)).then(() => sm.run(capture)),
        yieldTurns(Math.max(0, headStart)).then(() =>
          sm.service.signal(workflow, 'payment', { payload: { round } }),
        ),
      ]);

      const after = (await sm.history(workflow)).find((e) => e.id === capture.id)!;
      const claimedAtGate = after.state === 'completed';
      const woken = after.state === 'scheduled' && after.jobId === `${capture.id}_1`;
      expect({ round, state: after.state, claimedAtGate, woken }).toEqual({
        round,
        state: expect.stringMatching(/^(completed|scheduled)$/),
        claimedAtGate: !woken,
        woken: !claimedAtGate,
      });
      expect(after.signalId).toBe(sent.id);
      if (woken) {
        outcomes.wokenAfterParking += 1;
        await sm.run(capture);
      } else {
        outcomes.claimedAtGate += 1;
      }

      // Either way: the body ran once with the signal, which is consumed once.
      expect(sm.script.payloadsFor(hero)).toEqual([undefined, { round }]);
      expect(await sm.trace(workflow)).toEqual([
        'prepare:completed/success',
        'capture:completed/success',
        'ship:scheduled/null',
      ]);
      const signals = await sm.signals(workflow);
      expect(signals.map((s) => [s.state, s.claimed, s.consumed])).toEqual([['consumed', 1, 1]]);
    }
    // Both orders happened, so the race was run, not just one side after the other.
    expect(outcomes.claimedAtGate).toBeGreaterThan(0);
    expect(outcomes.wokenAfterParking).toBeGreaterThan(0);
  });
});
