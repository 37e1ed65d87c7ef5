import {
  InvalidArgumentError,
  SignalEntity,
  SignalPayloadTooLargeError,
  WorkflowNotOngoingError,
  type StepExecutionEntity,
  type WorkflowEntity,
} from '../../lib';
import { Order } from '../fixtures/order.entity';
import {
  ExplodingMatcherWorkflow,
  MatcherWorkflow,
  PaymentWorkflow,
  SkippingSignalWorkflow,
  TwoApprovalsWorkflow,
} from '../fixtures/signal.workflows';
import { StepScript } from '../fixtures/step-script';
import { Deferred } from './support/deferred';
import { testDatabaseLabel } from './support/database';
import { EngineHarness } from './support/engine-harness';
import { describeIf } from './support/describe-if';
import { testTransport } from './support/transport';

const WORKFLOWS = [
  PaymentWorkflow,
  TwoApprovalsWorkflow,
  MatcherWorkflow,
  ExplodingMatcherWorkflow,
  SkippingSignalWorkflow,
];

describe(`signals with BullMQ workers (${testDatabaseLabel} + Redis)`, () => {
  let harness: EngineHarness;
  let script: StepScript;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: WORKFLOWS,
      providers: [StepScript],
      entities: [Order],
      options: { maxSignalPayloadSize: 1024 },
    });
    script = harness.get(StepScript);
  });

  afterAll(() => harness?.close());

  const newOrder = (status = 'new') => harness.dataSource.getRepository(Order).save({ status });

  async function parked(workflow: WorkflowEntity, stepName: string): Promise<StepExecutionEntity> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const current = await harness.service.currentExecution(workflow);
      if (current?.state === 'waiting' && current.stepName === stepName) return current;
      if (Date.now() > deadline)
        throw new Error(`never parked at ${stepName}: ${JSON.stringify(current)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async function signalRow(workflow: WorkflowEntity, name: string): Promise<SignalEntity> {
    const rows = (await harness.service.signals(workflow)).filter((signal) => signal.name === name);
    return rows[rows.length - 1];
  }

  it('a late signal wakes the parked step, which receives it', async () => {
    const order = await newOrder();
    let received: unknown;
    script.plan(order, { capture: (ctx) => (received = ctx.receivedSignal?.payload) });
    const workflow = await harness.service.start(PaymentWorkflow, { hero: order });
    const waiting = await parked(workflow, 'capture');
    expect(waiting.waitingSince).toBeInstanceOf(Date);
    expect((await harness.service.find(workflow.id))?.state).toBe('ready');

    const signal = await harness.service.signal(workflow, 'payment', {
      payload: { amountCents: 4200, Keep: 'Case' },
    });
    expect(signal.duplicateDelivery).toBe(false);
    await harness.waitForState(workflow.id, 'finished');
    expect(received).toEqual({ amountCents: 4200, Keep: 'Case' });
    expect(await signalRow(workflow, 'payment')).toMatchObject({
      state: 'consumed',
      claimed: 1,
      consumed: 1,
    });
    const capture = (await harness.history(workflow.id)).find(
      (e) => e.stepName === 'capture' && e.state === 'completed',
    );
    expect(capture?.signalId).toBe(signal.id);
  });

  it('an early signal is buffered and claimed when the step reaches its gate', async () => {
    const order = await newOrder();
    const release = new Deferred();
    const entered = new Deferred();
    script.plan(order, {
      prepare: async () => {
        entered.resolve();
        await release.promise;
      },
    });
    const workflow = await harness.service.start(PaymentWorkflow, { hero: order });
    await entered.promise;
    const signal = await harness.service.signal(workflow, 'payment', { payload: { n: 1 } });
    expect((await signalRow(workflow, 'payment')).state).toBe('pending');
    release.resolve();
    await harness.waitForState(workflow.id, 'finished');
    const row = await signalRow(workflow, 'payment');
    expect(row).toMatchObject({ id: signal.id, state: 'consumed', claimed: 1, consumed: 1 });
    expect(row.claimedAt).toBeInstanceOf(Date);
    expect(row.consumedAt).toBeInstanceOf(Date);
  });

  it('an idempotency key dedupes: the first payload wins, nothing is dispatched twice', async () => {
    const order = await newOrder();
    const workflow = await harness.service.start(PaymentWorkflow, { hero: order });
    await parked(workflow, 'capture');
    const first = await harness.service.signal(workflow, 'payment', {
      payload: { v: 1 },
      idempotencyKey: 'evt_1',
    });
    const again = await harness.service.signal(workflow, 'payment', {
      payload: { v: 2 },
      idempotencyKey: 'evt_1',
    });
    expect(again.duplicateDelivery).toBe(true);
    expect(again.id).toBe(first.id);
    expect(again.payload).toEqual({ v: 1 });
    await harness.waitForState(workflow.id, 'finished');
    expect(await harness.service.signals(workflow)).toHaveLength(1);
    // A redelivery after the workflow finished returns the original; a new key is refused.
    expect(
      (await harness.service.signal(workflow, 'payment', { idempotencyKey: 'evt_1' }))
        .duplicateDelivery,
    ).toBe(true);
    await expect(
      harness.service.signal(workflow, 'payment', { idempotencyKey: 'evt_2' }),
    ).rejects.toThrow(WorkflowNotOngoingError);
    await expect(harness.service.signal(workflow, 'payment')).rejects.toThrow(
      WorkflowNotOngoingError,
    );
  });

  it('a paused workflow buffers signals; resume() runs the rendezvous again', async () => {
    const workflow = await harness.service.start(PaymentWorkflow, { hero: await newOrder() });
    await parked(workflow, 'capture');
    await harness.service.pause(workflow);
    await harness.service.signal(workflow, 'payment');
    expect((await signalRow(workflow, 'payment')).state).toBe('pending');
    expect((await harness.service.currentExecution(workflow))?.state).toBe('waiting');
    await harness.service.resume(workflow);
    await harness.waitForState(workflow.id, 'finished');
    expect((await signalRow(workflow, 'payment')).state).toBe('consumed');
  });

  it('payloads come back exactly as sent, strings that read as JSON included; idempotency keys are case-sensitive', async () => {
    const workflow = await harness.service.start(PaymentWorkflow, { hero: await newOrder() });
    await harness.service.pause(workflow);
    const payloads: unknown[] = [
      '123',
      '{"x":1}',
      'true',
      '"q"',
      7,
      false,
      [2, '1'],
      { zeta: 1, Alpha: { b: 2, a: 1 } },
      'Zürich ✓',
    ];
    for (const [i, payload] of payloads.entries()) {
      await harness.service.signal(workflow, 'note', { payload, idempotencyKey: `key-${i}` });
    }
    const upper = await harness.service.signal(workflow, 'note', {
      payload: 'upper',
      idempotencyKey: 'KEY-0',
    });
    expect(upper.duplicateDelivery).toBe(false);
    const rows = (await harness.service.signals(workflow)).filter(
      (signal) => signal.name === 'note',
    );
    expect(rows.map((row) => row.payload)).toStrictEqual([...payloads, 'upper']);
    expect(Object.keys(rows[7].payload as object)).toEqual(['zeta', 'Alpha']);
    expect(Object.keys((rows[7].payload as { Alpha: object }).Alpha)).toEqual(['b', 'a']);
    await harness.service.cancel(workflow);
  });

  it('argument errors and oversized payloads reject before anything is written', async () => {
    const workflow = await harness.service.start(PaymentWorkflow, { hero: await newOrder() });
    await expect(harness.service.signal(workflow, ' ')).rejects.toThrow(InvalidArgumentError);
    await expect(
      harness.service.signal(workflow, 'payment', { timeout: 5 } as never),
    ).rejects.toThrow(/timeout/);
    await expect(
      harness.service.signal(workflow, 'payment', { payload: 'x'.repeat(2000) }),
    ).rejects.toThrow(SignalPayloadTooLargeError);
    expect(await harness.service.signals(workflow)).toHaveLength(0);
  });

  it('a matcher that throws rolls the whole delivery back', async () => {
    const workflow = await harness.service.start(ExplodingMatcherWorkflow, {
      hero: await newOrder(),
    });
    await parked(workflow, 'wait');
    await expect(harness.service.signal(workflow, 'boom')).rejects.toThrow('matcher exploded');
    expect(await harness.service.signals(workflow)).toHaveLength(0);
    expect((await harness.service.currentExecution(workflow))?.state).toBe('waiting');
  });

  it('a payload predicate that sees the hero decides which signal wakes the step', async () => {
    const workflow = await harness.service.start(MatcherWorkflow, { hero: await newOrder('big') });
    await parked(workflow, 'capture');
    await harness.service.signal(workflow, 'payment', { payload: { amount: 50 } });
    expect((await harness.service.currentExecution(workflow))?.state).toBe('waiting');
    await harness.service.signal(workflow, 'payment', { payload: { amount: 150 } });
    await harness.waitForState(workflow.id, 'finished');
    const [small, big] = await harness.service.signals(workflow);
    expect([small.state, big.state]).toEqual(['pending', 'consumed']);
  });

  it('counters through fail, resume, succeed: claimed 2, consumed 1', async () => {
    const order = await newOrder();
    let failures = 0;
    script.plan(order, {
      capture: () => {
        if (failures++ === 0) throw new Error('gateway timeout');
      },
    });
    const workflow = await harness.service.start(PaymentWorkflow, { hero: order });
    await parked(workflow, 'capture');
    await harness.service.signal(workflow, 'payment');
    await harness.waitForState(workflow.id, 'paused');
    expect(await signalRow(workflow, 'payment')).toMatchObject({
      state: 'claimed',
      claimed: 1,
      consumed: 0,
    });
    await harness.service.resume(workflow);
    await harness.waitForState(workflow.id, 'finished');
    expect(await signalRow(workflow, 'payment')).toMatchObject({
      state: 'consumed',
      claimed: 2,
      consumed: 1,
    });
  });

  it('consume once: two waiting steps need two signals, and the oldest signal wins (FIFO)', async () => {
    const order = await newOrder();
    const seen: unknown[] = [];
    script.plan(order, {
      first: (ctx) => void seen.push(ctx.receivedSignal?.payload),
      second: (ctx) => void seen.push(ctx.receivedSignal?.payload),
    });
    const workflow = await harness.service.start(TwoApprovalsWorkflow, { hero: order });
    await parked(workflow, 'first');
    await harness.service.signal(workflow, 'approval', { payload: 'one' });
    await parked(workflow, 'second');
    expect(seen).toEqual(['one']);
    await harness.service.pause(workflow);
    await harness.service.signal(workflow, 'approval', { payload: 'two' });
    await harness.service.signal(workflow, 'approval', { payload: 'three' });
    await harness.service.resume(workflow);
    await harness.waitForState(workflow.id, 'finished');
    expect(seen).toEqual(['one', 'two']);
    expect((await harness.service.signals(workflow)).map((s) => s.state)).toEqual([
      'consumed',
      'consumed',
      'pending',
    ]);
  });

  it('skips settle the claimed signal: ctx.skip(), a skip policy, and an operator skip of a paused workflow', async () => {
    const viaVerb = await newOrder();
    script.plan(viaVerb, { capture: (ctx) => ctx.skip() });
    const w1 = await harness.service.start(PaymentWorkflow, { hero: viaVerb });
    await parked(w1, 'capture');
    await harness.service.signal(w1, 'payment');
    await harness.waitForState(w1.id, 'finished');
    expect((await signalRow(w1, 'payment')).state).toBe('consumed');

    const viaPolicy = await newOrder();
    script.plan(viaPolicy, {
      act: () => {
        throw new Error('nope');
      },
    });
    const w2 = await harness.service.start(SkippingSignalWorkflow, { hero: viaPolicy });
    await parked(w2, 'act');
    await harness.service.signal(w2, 'go');
    await harness.waitForState(w2.id, 'finished');
    expect((await signalRow(w2, 'go')).state).toBe('consumed');

    const viaOperator = await newOrder();
    script.plan(viaOperator, {
      capture: () => {
        throw new Error('declined');
      },
    });
    const w3 = await harness.service.start(PaymentWorkflow, { hero: viaOperator });
    await parked(w3, 'capture');
    await harness.service.signal(w3, 'payment');
    await harness.waitForState(w3.id, 'paused');
    expect((await signalRow(w3, 'payment')).state).toBe('claimed');
    await harness.service.skip(w3);
    await harness.waitForState(w3.id, 'finished');
    expect((await signalRow(w3, 'payment')).state).toBe('consumed');
  });

  it('cancel() of a parked execution cancels it; skip() of a parked execution moves on', async () => {
    const canceled = await harness.service.start(PaymentWorkflow, { hero: await newOrder() });
    await parked(canceled, 'capture');
    await harness.service.cancel(canceled);
    const last = (await harness.history(canceled.id)).at(-1)!;
    expect([last.stepName, last.state]).toEqual(['capture', 'canceled']);

    const skipped = await harness.service.start(PaymentWorkflow, { hero: await newOrder() });
    await parked(skipped, 'capture');
    await harness.service.skip(skipped);
    await harness.waitForState(skipped.id, 'finished');
    expect((await harness.history(skipped.id)).map((e) => `${e.stepName}:${e.state}`)).toEqual([
      'prepare:completed',
      'capture:skipped',
      'ship:completed',
    ]);
  });
});

/**
 * The rendezvous raced on the real database: the runner is driven directly (`worker: false`), so
 * a signal and the step's gate run truly concurrently, round after round. Not on the local
 * transport, which refuses `worker: false` (it would run nothing).
 */
describeIf(testTransport !== 'local')(`signal races (${testDatabaseLabel})`, () => {
  let harness: EngineHarness;
  let script: StepScript;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: WORKFLOWS,
      providers: [StepScript],
      entities: [Order],
      options: { worker: false },
    });
    script = harness.get(StepScript);
  });

  afterAll(() => harness?.close());

  async function atCaptureGate(): Promise<{
    workflow: WorkflowEntity;
    order: Order;
    capture: StepExecutionEntity;
  }> {
    const order = await harness.dataSource.getRepository(Order).save({ status: 'new' });
    const workflow = await harness.service.start(PaymentWorkflow, { hero: order });
    await harness.runner.performStep((await harness.service.currentExecution(workflow))!.id);
    const capture = (await harness.service.currentExecution(workflow))!;
    expect([capture.stepName, capture.state]).toEqual(['capture', 'scheduled']);
    return { workflow, order, capture };
  }

  /** Runs the capture execution again if the signal woke it (no worker consumes the job here). */
  async function drain(workflow: WorkflowEntity): Promise<void> {
    for (let i = 0; i < 5; i++) {
      const current = await harness.service.currentExecution(workflow);
      if (!current || current.state !== 'scheduled' || current.stepName !== 'capture') return;
      await harness.runner.performStep(current.id);
    }
  }

  it('signal() racing the gate: the step runs exactly once, nothing is left parked beside a pending signal', async () => {
    for (let round = 0; round < 30; round++) {
      const { workflow, order, capture } = await atCaptureGate();
      const sendFirst = round % 2 === 0;
      await Promise.all(
        sendFirst
          ? [harness.service.signal(workflow, 'payment'), harness.runner.performStep(capture.id)]
          : [harness.runner.performStep(capture.id), harness.service.signal(workflow, 'payment')],
      );
      await drain(workflow);
      expect(script.callsFor(order).filter((step) => step === 'capture')).toHaveLength(1);
      const [signal] = await harness.service.signals(workflow);
      expect(signal).toMatchObject({ state: 'consumed', claimed: 1, consumed: 1 });
      const current = await harness.service.currentExecution(workflow);
      expect(current?.stepName).toBe('ship');
    }
  });

  it('concurrent deliveries with one idempotency key racing the gate: one row, one run', async () => {
    for (let round = 0; round < 20; round++) {
      const { workflow, order, capture } = await atCaptureGate();
      const results = await Promise.all([
        harness.service.signal(workflow, 'payment', { idempotencyKey: 'evt', payload: { n: 1 } }),
        harness.service.signal(workflow, 'payment', { idempotencyKey: 'evt', payload: { n: 2 } }),
        harness.runner.performStep(capture.id).then(() => null),
        harness.service.signal(workflow, 'payment', { idempotencyKey: 'evt', payload: { n: 3 } }),
      ]);
      await drain(workflow);
      const signals = await harness.service.signals(workflow);
      expect(signals).toHaveLength(1);
      const delivered = results.filter((r): r is SignalEntity => r !== null);
      expect(delivered.filter((s) => !s.duplicateDelivery)).toHaveLength(1);
      expect(new Set(delivered.map((s) => s.id)).size).toBe(1);
      expect(script.callsFor(order).filter((step) => step === 'capture')).toHaveLength(1);
      expect(signals[0].state).toBe('consumed');
    }
  });
});
