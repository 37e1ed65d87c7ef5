import diagnosticsChannel from 'node:diagnostics_channel';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import {
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS,
  InvalidStateError,
  ResumableStep,
  Step,
  Workflow,
  type GenevaDriveDiagnosticsEvent,
  type IterableStep,
  type StepContext,
} from '../../lib';
import { WorkflowEntity } from '../../lib/entities/workflow.entity';
import { DiagnosticsRecorder } from './support/diagnostics-recorder';
import { Order } from '../fixtures/order.entity';
import { describeIf } from './support/describe-if';
import { untilLockWaitOn } from './support/lock-wait';
import { EngineHarness } from './support/engine-harness';
import { postgresConnection, testDatabase } from './support/database';
import { isFence, recordMessages, transactionsOf } from './support/sql-messages';
import { testTransport } from './support/transport';

/** What the bodies of `first` and `second` do (set by each test). */
@Injectable()
class FirstBody {
  run: (ctx: StepContext<Order>) => Promise<void> = () => Promise.resolve();
  second: (ctx: StepContext<Order>) => void = () => undefined;
}

@Workflow({ name: 'FenceWorkflow' })
class FenceWorkflow {
  constructor(private readonly body: FirstBody) {}

  @Step() async first(ctx: StepContext<Order>) {
    await this.body.run(ctx);
  }
  @Step() second(ctx: StepContext<Order>) {
    this.body.second(ctx);
  }
  @Step() third() {}
}

/** A resumable step that checkpoints twice, then a plain one. */
@Workflow({ name: 'FenceResumableWorkflow' })
class FenceResumableWorkflow {
  @ResumableStep() async walk(iter: IterableStep<number>) {
    await iter.iterateOver([1, 2], () => undefined);
  }
  @Step() after() {}
}

const RACE_STEPS = 12;

/** Twelve trivial steps: every finalize but the last chains the next one. */
@Workflow({ name: 'FenceRaceWorkflow' })
class FenceRaceWorkflow {
  @Step() s1() {}
  @Step() s2() {}
  @Step() s3() {}
  @Step() s4() {}
  @Step() s5() {}
  @Step() s6() {}
  @Step() s7() {}
  @Step() s8() {}
  @Step() s9() {}
  @Step() s10() {}
  @Step() s11() {}
  @Step() s12() {}
}

/**
 * A step chain's finalize expects the rows as its step left them and sends its locks, a fence and
 * its fenced writes in one message (PostgreSQL). When something else changed them while the body
 * ran, none of those writes lands and the finalize runs again, reading first: the outcome is the
 * one a finalize that read first decides.
 */
describeIf(testDatabase === 'postgres' && testTransport !== 'local')(
  'the step chain fence (PostgreSQL)',
  () => {
    let harness: EngineHarness;
    let body: FirstBody;
    let messages: string[][];
    const orders = () => harness.dataSource.getRepository(Order);
    const newOrder = () => orders().save(orders().create({ status: 'new' }));
    const steps = async (id: string) =>
      (await harness.history(id)).map((e) => `${e.stepName}:${e.state}/${e.outcome}`);
    /**
     * The messages of `first`'s finalize: fenced, then the next transaction's (when broken, the
     * run that read first). Only transactions count: the harness's polls run between them.
     */
    /** `first` completed, then `second`'s prepare found no hero and canceled the workflow. */
    const expectCanceledAtSecond = async (id: string) => {
      await harness.waitForWorkflow(
        id,
        async (row) => row.state === 'canceled' && (await steps(row.id)).length === 2,
      );
      expect(await steps(id)).toEqual(['first:completed/success', 'second:canceled/canceled']);
    };
    const finalizeOfFirst = (sent: string[][]) => {
      const transactions = transactionsOf(sent);
      const fenced = transactions.findIndex((statements) => statements.some(isFence));
      return { fenced: transactions[fenced], rerun: transactions[fenced + 1] };
    };

    beforeAll(async () => {
      harness = await EngineHarness.boot({
        workflows: [FenceWorkflow, FenceRaceWorkflow, FenceResumableWorkflow],
        providers: [FirstBody],
        entities: [Order],
      });
      body = harness.get(FirstBody);
      messages = recordMessages(harness.dataSource);
    });
    afterEach(() => {
      body.run = () => Promise.resolve();
      body.second = () => undefined;
    });
    afterAll(() => harness?.close());

    it('holds when nothing changed: one message locks, fences, writes and commits', async () => {
      const mark = messages.length;
      const workflow = await harness.service.start(FenceWorkflow, { hero: await newOrder() });
      await harness.waitForState(workflow.id, 'finished');

      expect(await steps(workflow.id)).toEqual([
        'first:completed/success',
        'second:completed/success',
        'third:completed/success',
      ]);
      const { fenced, rerun } = finalizeOfFirst(messages.slice(mark));
      expect(fenced[0]).toBe('BEGIN');
      expect(fenced.at(-1)).toBe('COMMIT');
      // The next message is the finalize of `second`, fenced in turn: nothing ran again.
      expect(rerun.some(isFence)).toBe(true);
    });

    it('breaks on a pause during the body: the step completes, the workflow pauses at the next step', async () => {
      body.run = async (ctx) => {
        await harness.service.pause(ctx.workflow.id);
      };
      const mark = messages.length;
      const workflow = await harness.service.start(FenceWorkflow, { hero: await newOrder() });
      await harness.waitForWorkflow(
        workflow.id,
        async (row) =>
          row.state === 'paused' && (await steps(row.id))[0] === 'first:completed/success',
      );
      // Read after the finalize committed: pause() marks the row paused before the step ends, so
      // the row the wait read may predate the finalize that points it at the next step.
      const paused = await harness.service.find(workflow.id);

      expect(paused?.state).toBe('paused');
      expect(paused?.nextStepName).toBe('second');
      expect(await steps(workflow.id)).toEqual(['first:completed/success']);
      const { rerun } = finalizeOfFirst(messages.slice(mark));
      // Run again, reading first: its locks' message carries no fence.
      expect(rerun[0]).toBe('BEGIN');
      expect(rerun.some(isFence)).toBe(false);

      body.run = () => Promise.resolve();
      await harness.service.resume(workflow.id);
      await harness.waitForState(workflow.id, 'finished');
    });

    it('breaks on a cancel during the body: the step is recorded canceled, nothing follows', async () => {
      body.run = async (ctx) => {
        await harness.service.cancel(ctx.workflow.id);
      };
      const workflow = await harness.service.start(FenceWorkflow, { hero: await newOrder() });
      await harness.waitForWorkflow(
        workflow.id,
        async (row) =>
          row.state === 'canceled' && (await steps(row.id))[0] === 'first:canceled/canceled',
      );
      expect(await steps(workflow.id)).toEqual(['first:canceled/canceled']);
    });

    it('breaks when the hero is deleted during the body: the next step finds no hero and cancels', async () => {
      body.run = async (ctx) => {
        await harness.dataSource.getRepository(Order).delete(ctx.hero.id);
      };
      const workflow = await harness.service.start(FenceWorkflow, { hero: await newOrder() });
      await expectCanceledAtSecond(workflow.id);
    });

    // The fence locks the rows first and reads the hero only once the locks are held. Checked in
    // the locking statement itself, the hero would be seen as it was before the wait: the fence
    // would hold, and the next step would run without its hero.
    it('waits for the workflow lock, then reads the hero: one deleted by the lock holder breaks the fence', async () => {
      // A gate on connections of its own: one holds the lock, the other watches for the wait.
      const own = await new DataSource({ ...postgresConnection, extra: { max: 2 } }).initialize();
      const gate = own.createQueryRunner();
      try {
        const workflows = harness.dataSource.getMetadata(WorkflowEntity).tablePath;
        const heroes = harness.dataSource.getMetadata(Order).tablePath;
        let holding!: (pid: number) => void;
        const held = new Promise<number>((resolve) => (holding = resolve));
        body.run = async (ctx) => {
          await gate.startTransaction();
          await gate.query(`SELECT 1 FROM ${workflows} WHERE id = $1 FOR UPDATE`, [
            ctx.workflow.id,
          ]);
          const [{ pid }] = (await gate.query('SELECT pg_backend_pid() AS pid')) as Array<{
            pid: number;
          }>;
          holding(pid);
        };
        const hero = await newOrder();
        const mark = messages.length;
        const workflow = await harness.service.start(FenceWorkflow, { hero });
        await untilLockWaitOn(own, await held);
        await gate.query(`DELETE FROM ${heroes} WHERE id = $1`, [hero.id]);
        await gate.commitTransaction();
        await expectCanceledAtSecond(workflow.id);
        // The finalize that waited guessed, and ran again reading first.
        const { fenced, rerun } = finalizeOfFirst(messages.slice(mark));
        expect(fenced).toBeDefined();
        expect(rerun?.some(isFence)).toBe(false);
      } finally {
        if (gate.isTransactionActive) await gate.rollbackTransaction();
        await gate.release();
        await own.destroy();
      }
    });

    // Removing the fence (every fenced write landing) fails this: a finalize that guessed
    // `performing` then writes over the pause or the cancel, and the workflow runs to its end.
    it('a pause or a cancel racing the chain: 50 rounds, each ends as a finalize that read first decides', async () => {
      const recorder = new DiagnosticsRecorder([GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.finalize]);
      let target: { workflowId: string; stepName: string; act: () => Promise<unknown> } | null =
        null;
      const acts: Array<Promise<unknown>> = [];
      // Right after the body of the target step, as its finalize begins.
      const onStep = (message: unknown) => {
        const event = message as GenevaDriveDiagnosticsEvent;
        if (target?.workflowId !== event.workflowId || target.stepName !== event.stepName) return;
        acts.push(target.act().catch((error: unknown) => error));
        target = null;
      };
      diagnosticsChannel.subscribe(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.step, onStep);
      let late = 0;
      try {
        for (let round = 0; round < 50; round++) {
          const verb = round % 2 === 0 ? 'pause' : 'cancel';
          const ended = verb === 'pause' ? 'paused' : 'canceled';
          const stepName = `s${1 + (round % (RACE_STEPS / 2))}`;
          await harness.queue().pause();
          const workflow = await harness.service.start(FenceRaceWorkflow, {
            hero: await newOrder(),
          });
          const id = workflow.id;
          target = { workflowId: id, stepName, act: () => harness.service[verb](id) };
          const settled = recorder.until(
            GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.finalize,
            (event) =>
              event.workflowId === id &&
              (event.workflowState === ended || event.workflowState === 'finished'),
          );
          await harness.queue().resume();
          await settled;
          const results = await Promise.all(acts.splice(0));
          expect(results).toHaveLength(1);
          if (results[0] instanceof InvalidStateError) {
            // On a busy machine the verb may come after the last step: refused, as it must be.
            late += 1;
            expect((await harness.service.find(id))?.state).toBe('finished');
            expect(await steps(id)).toEqual(
              Array.from({ length: RACE_STEPS }, (_, index) => `s${index + 1}:completed/success`),
            );
            continue;
          }
          expect(results[0]).not.toBeInstanceOf(Error);

          const history = await harness.history(id);
          const row = await harness.service.find(id);
          const outcomes = history.map((e) => `${e.state}/${e.outcome}`);
          const last = history.length - 1;
          expect(row?.state).toBe(ended);
          expect(history.map((e) => e.stepName)).toEqual(
            Array.from({ length: history.length }, (_, index) => `s${index + 1}`),
          );
          if (verb === 'pause') {
            // The running step records its outcome; the next one is pointed at, not created.
            expect(outcomes).toEqual(history.map(() => 'completed/success'));
            expect(row?.nextStepName).toBe(`s${history.length + 1}`);
            await harness.service.resume(id);
            await recorder.until(
              GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.finalize,
              (event) => event.workflowId === id && event.workflowState === 'finished',
            );
            const resumed = await harness.history(id);
            expect(resumed.map((e) => `${e.stepName}:${e.state}/${e.outcome}`)).toEqual(
              Array.from({ length: RACE_STEPS }, (_, index) => `s${index + 1}:completed/success`),
            );
          } else {
            // The running step is recorded canceled; nothing follows it.
            expect(outcomes.slice(0, last)).toEqual(
              history.slice(0, last).map(() => 'completed/success'),
            );
            expect(outcomes[last]).toBe('canceled/canceled');
          }
        }
        // Most rounds race the chain: the verb lands while it runs.
        expect(late).toBeLessThan(10);
      } finally {
        diagnosticsChannel.unsubscribe(GENEVA_DRIVE_DIAGNOSTICS_CHANNELS.step, onStep);
        recorder.close();
      }
    });

    it('reads first after a resumable step, whose checkpoints write its row: no guess that must break', async () => {
      const mark = messages.length;
      const workflow = await harness.service.start(FenceResumableWorkflow, {
        hero: await newOrder(),
      });
      await harness.waitForState(workflow.id, 'finished');

      expect(await steps(workflow.id)).toEqual([
        'walk:completed/success',
        'after:completed/success',
      ]);
      expect(messages.slice(mark).some((statements) => statements.some(isFence))).toBe(false);
    });

    it("the next step's body sees the hero as the previous step left it", async () => {
      const seen: string[] = [];
      body.run = async (ctx) => {
        await harness.dataSource.getRepository(Order).update(ctx.hero.id, { status: 'touched' });
      };
      body.second = (ctx) => seen.push(ctx.hero.status);
      const workflow = await harness.service.start(FenceWorkflow, { hero: await newOrder() });
      await harness.waitForState(workflow.id, 'finished');
      expect(seen).toEqual(['touched']);
    });
  },
);
