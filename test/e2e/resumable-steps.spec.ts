import { CursorTooLargeError, type WorkflowEntity } from '../../lib';
import { Order } from '../fixtures/order.entity';
import {
  IterationScript,
  ScriptedResumableWorkflow,
  SubscribersWorkflow,
  TenItemsWorkflow,
  TimedResumableWorkflow,
} from '../fixtures/resumable.workflows';
import { Subscriber } from '../fixtures/subscriber.entity';
import { Deferred } from './support/deferred';
import { testDatabaseLabel } from './support/database';
import { EngineHarness } from './support/engine-harness';

const WORKFLOWS = [
  TenItemsWorkflow,
  ScriptedResumableWorkflow,
  TimedResumableWorkflow,
  SubscribersWorkflow,
];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe(`resumable steps (${testDatabaseLabel} + BullMQ)`, () => {
  let harness: EngineHarness;
  let script: IterationScript;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: WORKFLOWS,
      providers: [IterationScript],
      entities: [Order, Subscriber],
      options: { maxCursorSize: 256 },
    });
    script = harness.get(IterationScript);
  });

  afterAll(() => harness?.close());

  const newOrder = () => harness.dataSource.getRepository(Order).save({ status: 'new' });

  async function chain(workflow: WorkflowEntity, stepName: string) {
    return (await harness.history(workflow.id)).filter((e) => e.stepName === stepName);
  }

  it('10 items with maxIterations 3: four chained executions, each item processed exactly once', async () => {
    const order = await newOrder();
    const workflow = await harness.service.start(TenItemsWorkflow, { hero: order });
    await harness.waitForState(workflow.id, 'finished');
    expect(script.itemsOf(order)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const executions = await chain(workflow, 'process');
    expect(executions.map((e) => `${e.state}/${e.outcome}:${String(e.cursor)}`)).toEqual([
      'completed/continued:3',
      'completed/continued:6',
      'completed/continued:9',
      'completed/success:10',
    ]);
    expect(executions.slice(1).map((e) => e.continuesFromId)).toEqual(
      executions.slice(0, 3).map((e) => e.id),
    );
  });

  it('iterateOverRecords walks rows by keyset; iterateOverBatches checkpoints the max id per batch', async () => {
    const rows = await harness.dataSource
      .getRepository(Subscriber)
      .save(Array.from({ length: 50 }, (_, i) => ({ email: `s${i}@example.com` })));
    const ids = rows.map((row) => row.id);
    const order = await newOrder();
    const workflow = await harness.service.start(SubscribersWorkflow, { hero: order });
    await harness.waitForState(workflow.id, 'finished', 20_000);
    const processed = script.itemsOf(order);
    const singles = processed.filter((item): item is number => typeof item === 'number');
    expect(singles).toEqual(ids);
    const batches = processed.filter((item): item is number[] => Array.isArray(item));
    expect(batches.flat()).toEqual(ids);
    expect(batches.every((batch) => batch.length <= 7)).toBe(true);
    expect((await chain(workflow, 'records')).length).toBe(2);
    expect((await chain(workflow, 'batches')).map((e) => e.cursor).slice(0, 1)).toEqual([ids[13]]);
  });

  it('maxRuntime interrupts at the next checkpoint and the chain continues', async () => {
    const order = await newOrder();
    script.plan(order, async (iter) => {
      await iter.iterateOver([...Array(8).keys()], async (item) => {
        await sleep(40);
        script.record(order, item);
      });
    });
    const workflow = await harness.service.start(TimedResumableWorkflow, { hero: order });
    await harness.waitForState(workflow.id, 'finished', 20_000);
    expect(script.itemsOf(order)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const executions = await chain(workflow, 'walk');
    expect(executions.length).toBeGreaterThan(1);
    expect(executions.slice(0, -1).every((e) => e.outcome === 'continued')).toBe(true);
  });

  it('an external pause is seen at the next checkpoint; resume() continues from the cursor', async () => {
    const order = await newOrder();
    const reachedThree = new Deferred();
    const goOn = new Deferred();
    script.plan(order, async (iter) => {
      await iter.iterateOver([...Array(6).keys()], async (item) => {
        if (item === 3) {
          reachedThree.resolve();
          await goOn.promise;
        }
        script.record(order, item);
      });
    });
    const workflow = await harness.service.start(ScriptedResumableWorkflow, { hero: order });
    await reachedThree.promise;
    await harness.service.pause(workflow);
    goOn.resolve();
    await harness.waitForWorkflow(
      workflow.id,
      (w) => w.state === 'paused' && w.currentStepName === null,
    );
    const [first] = await chain(workflow, 'walk');
    expect([first.state, first.outcome, first.cursor]).toEqual(['completed', 'workflow_paused', 4]);
    await harness.service.resume(workflow);
    await harness.waitForState(workflow.id, 'finished');
    expect(script.itemsOf(order)).toEqual([0, 1, 2, 3, 4, 5]);
    const [, successor] = await chain(workflow, 'walk');
    expect(successor.continuesFromId).toBe(first.id);
  });

  it('an external cancel stops the iteration at the next checkpoint', async () => {
    const order = await newOrder();
    const reachedTwo = new Deferred();
    const goOn = new Deferred();
    script.plan(order, async (iter) => {
      await iter.iterateOver([...Array(6).keys()], async (item) => {
        if (item === 2) {
          reachedTwo.resolve();
          await goOn.promise;
        }
        script.record(order, item);
      });
    });
    const workflow = await harness.service.start(ScriptedResumableWorkflow, { hero: order });
    await reachedTwo.promise;
    await harness.service.cancel(workflow);
    goOn.resolve();
    await harness.waitForWorkflow(workflow.id, (w) => w.currentStepName === null);
    expect(script.itemsOf(order)).toEqual([0, 1, 2]);
    const [only] = await chain(workflow, 'walk');
    expect([only.state, only.outcome]).toEqual(['canceled', 'canceled']);
  });

  it('skipTo() always interrupts, and the successor waits', async () => {
    const order = await newOrder();
    script.plan(order, async (iter) => {
      if (iter.cursor === null) await iter.skipTo(5, { wait: '1h' });
    });
    const workflow = await harness.service.start(ScriptedResumableWorkflow, { hero: order });
    await harness.waitForWorkflow(
      workflow.id,
      async () => (await chain(workflow, 'walk')).length === 2,
    );
    const [first, successor] = await chain(workflow, 'walk');
    expect([first.outcome, successor.state, successor.cursor]).toEqual([
      'continued',
      'scheduled',
      5,
    ]);
    expect(successor.scheduledFor.getTime() - Date.now()).toBeGreaterThan(3_500_000);
    await harness.service.cancel(workflow);
  });

  it('reattempt({ rewind: true }) starts over; a policy reattempt continues from the checkpoint', async () => {
    const rewound = await newOrder();
    let rewinds = 0;
    script.plan(rewound, async (iter, ctx) => {
      await iter.iterateOver(['a', 'b', 'c'], (item) => {
        script.record(rewound, item);
        if (item === 'b' && rewinds++ === 0) ctx.reattempt({ rewind: true });
      });
    });
    const w1 = await harness.service.start(ScriptedResumableWorkflow, { hero: rewound });
    await harness.waitForState(w1.id, 'finished');
    expect(script.itemsOf(rewound)).toEqual(['a', 'b', 'a', 'b', 'c']);
    const [rewoundExecution, restarted] = await chain(w1, 'walk');
    expect([rewoundExecution.outcome, rewoundExecution.cursor, restarted.cursor]).toEqual([
      'reattempted',
      null,
      3,
    ]);

    const flaky = await newOrder();
    let failures = 0;
    script.plan(flaky, async (iter) => {
      await iter.iterateOver(['a', 'b', 'c', 'd'], (item) => {
        if (item === 'c' && failures++ === 0) throw new Error('transient');
        script.record(flaky, item);
      });
    });
    const w2 = await harness.service.start(ScriptedResumableWorkflow, { hero: flaky });
    await harness.waitForState(w2.id, 'finished');
    expect(script.itemsOf(flaky)).toEqual(['a', 'b', 'c', 'd']);
    const [failed, successor] = await chain(w2, 'walk');
    expect([failed.outcome, failed.cursor, successor.continuesFromId]).toEqual([
      'reattempted',
      2,
      failed.id,
    ]);
  });

  it('a string cursor that reads as JSON ("42") comes back as that string', async () => {
    const order = await newOrder();
    let seen: unknown;
    script.plan(order, async (iter) => {
      if (iter.cursor === null) return iter.skipTo('42');
      seen = iter.cursor;
    });
    const workflow = await harness.service.start(ScriptedResumableWorkflow, { hero: order });
    await harness.waitForState(workflow.id, 'finished');
    expect(seen).toBe('42');
  });

  it('a Date cursor comes back as a Date; a cursor over maxCursorSize pauses with CursorTooLargeError', async () => {
    const dated = await newOrder();
    const when = new Date('2026-01-02T03:04:05.678Z');
    let seen: unknown;
    script.plan(dated, async (iter) => {
      if (iter.cursor === null) return iter.skipTo(when);
      seen = iter.cursor;
    });
    const w1 = await harness.service.start(ScriptedResumableWorkflow, { hero: dated });
    await harness.waitForState(w1.id, 'finished');
    expect(seen).toEqual(when);
    expect(seen).toBeInstanceOf(Date);

    const huge = await newOrder();
    script.plan(huge, (iter) => iter.set('x'.repeat(1000)));
    const w2 = await harness.service.start(TimedResumableWorkflow, { hero: huge });
    await harness.waitForState(w2.id, 'paused');
    const [failed] = await chain(w2, 'walk');
    expect([failed.state, failed.errorClassName]).toEqual(['failed', CursorTooLargeError.name]);
  });
});

describe(`resumable steps across a restart (${testDatabaseLabel} + BullMQ)`, () => {
  it('closing the app mid-iteration loses no item: a new process continues from the checkpoint', async () => {
    const first = await EngineHarness.boot({
      workflows: WORKFLOWS,
      providers: [IterationScript],
      entities: [Order],
    });
    const order = await first.dataSource.getRepository(Order).save({ status: 'new' });
    const started = new Deferred();
    const items = [...Array(30).keys()];
    const iterate = (harnessScript: IterationScript, onItem?: (item: number) => void) =>
      harnessScript.plan(order, async (iter) => {
        await iter.iterateOver(items, async (item) => {
          onItem?.(item);
          await sleep(15);
          harnessScript.record(order, item);
        });
      });
    const firstScript = first.get(IterationScript);
    iterate(firstScript, (item) => item === 3 && started.resolve());
    const workflow = await first.service.start(ScriptedResumableWorkflow, { hero: order });
    await started.promise;
    await first.closeApp();
    const before = firstScript.itemsOf(order) as number[];
    expect(before.length).toBeLessThan(items.length);

    const second = await EngineHarness.boot({
      workflows: WORKFLOWS,
      providers: [IterationScript],
      entities: [Order],
      reuse: { schema: first.schema, prefix: first.prefix },
    });
    try {
      const secondScript = second.get(IterationScript);
      iterate(secondScript);
      await second.waitForState(workflow.id, 'finished', 20_000);
      const after = secondScript.itemsOf(order) as number[];
      const all = [...before, ...after];
      expect(new Set(all)).toEqual(new Set(items));
      expect(all.length - items.length).toBeLessThanOrEqual(1);
      const executions = (await second.history(workflow.id)).filter((e) => e.stepName === 'walk');
      expect(executions[0].outcome).toBe('continued');
    } finally {
      await second.close();
    }
  });
});
