import { Injectable } from '@nestjs/common';
import {
  GENEVA_DRIVE_DIAGNOSTICS_CHANNELS,
  InvalidStateError,
  Step,
  Workflow,
  type StepContext,
} from '../../lib';
import { WORKFLOWS_TABLE } from '../../lib/migrations/migration.constants';
import { Order } from '../fixtures/order.entity';
import { DiagnosticsRecorder } from './support/diagnostics-recorder';
import { describeIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { testDatabase } from './support/database';
import { isFence, recordMessages, transactionsOf } from './support/sql-messages';
import { testTransport } from './support/transport';

/** What the woken body saw, by workflow id. */
@Injectable()
class WokenSightings {
  readonly heroes = new Map<string, Order>();
  readonly metadata = new Map<string, Record<string, unknown> | null>();
  readonly runs = new Map<string, number>();
}

@Workflow({ name: 'WakeFenceWorkflow', hero: () => Order })
class WakeFenceWorkflow {
  constructor(private readonly sightings: WokenSightings) {}

  @Step({ waitFor: 'go' }) woken(ctx: StepContext<Order>) {
    this.sightings.heroes.set(ctx.workflow.id, ctx.hero);
    this.sightings.metadata.set(ctx.workflow.id, ctx.workflow.metadata);
    this.sightings.runs.set(ctx.workflow.id, (this.sightings.runs.get(ctx.workflow.id) ?? 0) + 1);
  }
  @Step() after() {}
}

const { park, precondition, finalize } = GENEVA_DRIVE_DIAGNOSTICS_CHANNELS;
const RACE_ROUNDS = 50;
/**
 * A job woken by a signal delivery of this process prepares from the rows the delivery left
 * (WakeSnapshots), fenced: its locks, fence, writes and COMMIT in one message. When something
 * changed those rows between the wake and the job, nothing of that message lands and the prepare
 * runs again, reading first: the outcome is the one a prepare that read first decides.
 */
describeIf(testDatabase === 'postgres' && testTransport !== 'local')(
  'a woken step prepared from the wake (PostgreSQL)',
  () => {
    let harness: EngineHarness;
    let sightings: WokenSightings;
    let messages: string[][];
    let recorder: DiagnosticsRecorder;
    const orders = () => harness.dataSource.getRepository(Order);
    const ofWorkflow = (id: string) => (event: { workflowId: string }) => event.workflowId === id;
    const wokenStep = (id: string) => (event: { workflowId: string; stepName: string }) =>
      event.workflowId === id && event.stepName === 'woken';

    /** A parked workflow, signaled while the queue is paused: its woken job waits. */
    async function wokenButHeld(): Promise<{ id: string; hero: Order }> {
      const hero = await orders().save(orders().create({ status: 'new' }));
      const workflow = await harness.service.start(WakeFenceWorkflow, { hero });
      await recorder.until(park, ofWorkflow(workflow.id));
      await harness.queue().pause();
      await harness.service.signal(workflow.id, 'go');
      return { id: workflow.id, hero };
    }

    /**
     * Lets the held job run; resolves the transactions sent until `settled` resolves (the
     * harness's polls, outside any transaction, left out).
     */
    async function release(settled: Promise<unknown>): Promise<string[][]> {
      const mark = messages.length;
      await harness.queue().resume();
      await settled;
      return transactionsOf(messages.slice(mark));
    }

    /** The transaction after the fenced one read first: its locks' message carries no fence. */
    function expectReadFirstAfterFence(sent: string[][]): void {
      const fenced = sent.findIndex((statements) => statements.some(isFence));
      expect(fenced).toBeGreaterThanOrEqual(0);
      expect(sent[fenced + 1]).toEqual(
        expect.arrayContaining([expect.stringMatching(/"geneva_drive_workflows" .*FOR UPDATE$/)]),
      );
      expect(sent[fenced + 1].some(isFence)).toBe(false);
    }

    beforeAll(async () => {
      harness = await EngineHarness.boot({
        workflows: [WakeFenceWorkflow],
        providers: [WokenSightings],
        entities: [Order],
      });
      sightings = harness.get(WokenSightings);
      messages = recordMessages(harness.dataSource);
      recorder = new DiagnosticsRecorder([park, precondition, finalize]);
    });
    afterEach(() => harness.queue().resume());
    afterAll(async () => {
      recorder?.close();
      await harness?.close();
    });

    it('holds when nothing changed: the body gets the hero as read under the locks', async () => {
      const { id, hero } = await wokenButHeld();
      // Not a row the fence looks at: the body sees the change all the same.
      await orders().update(hero.id, { status: 'changed' });
      const sent = await release(harness.waitForState(id, 'finished'));

      const prepare = sent.find((statements) => statements.some(isFence))!;
      expect(prepare[0]).toBe('BEGIN');
      expect(prepare.at(-1)).toBe('COMMIT');
      expect(sightings.heroes.get(id)).toMatchObject({ id: hero.id, status: 'changed' });
      expect(sightings.runs.get(id)).toBe(1);
      // One at the park, one at the wake.
      expect(recorder.seen(precondition, wokenStep(id))).toHaveLength(2);
    });

    it('breaks on a pause between the wake and the job: the body does not run', async () => {
      const { id } = await wokenButHeld();
      await harness.service.pause(id);
      const sent = await release(
        harness.waitForWorkflow(id, async () =>
          (await harness.history(id)).some((e) => e.state === 'canceled'),
        ),
      );

      expectReadFirstAfterFence(sent);
      expect(sightings.runs.get(id)).toBeUndefined();
      expect((await harness.service.find(id))?.state).toBe('paused');
      expect((await harness.history(id)).map((e) => `${e.stepName}:${e.state}`)).toEqual([
        'woken:canceled',
      ]);
    });

    it('breaks on another write of the workflow row: the prepare reads first, the body sees the row as written, runs once, its events go out once', async () => {
      const { id } = await wokenButHeld();
      // A write the prepare does not decide on; the fence sees updated_at move.
      await harness.dataSource.query(
        `UPDATE "${harness.schema}"."${WORKFLOWS_TABLE}" SET "metadata" = $2, "updated_at" = "updated_at" + interval '1 millisecond' WHERE "id" = $1`,
        [id, JSON.stringify({ written: 'between the wake and the job' })],
      );
      const sent = await release(harness.waitForState(id, 'finished'));

      expectReadFirstAfterFence(sent);
      expect(sightings.metadata.get(id)).toEqual({ written: 'between the wake and the job' });
      expect(sightings.runs.get(id)).toBe(1);
      // One at the park, one at the wake: none from the broken attempt.
      expect(recorder.seen(precondition, wokenStep(id))).toHaveLength(2);
      expect(recorder.seen(finalize, wokenStep(id))).toHaveLength(1);
    });

    it('races a pause against the woken job, 50 rounds: the body runs at most once, and only where the prepare committed first', async () => {
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const hero = await orders().save(orders().create({ status: 'new' }));
        const { id } = await harness.service.start(WakeFenceWorkflow, { hero });
        await recorder.until(park, ofWorkflow(id));
        await harness.service.signal(id, 'go');
        // A few turns of the event loop (0 to 7) spread the pause over the woken job's way.
        for (let turn = 0; turn < round % 8; turn++)
          await new Promise((resolve) => setImmediate(resolve));
        // Too late is an outcome too: the body ran and the workflow finished before the pause.
        const paused = await harness.service.pause(id).then(
          () => true,
          (error: unknown) => {
            if (error instanceof InvalidStateError) return false;
            throw error;
          },
        );
        const settled = await harness.waitForWorkflow(id, async (row) => {
          const [first] = await harness.history(id);
          return (
            row.state === 'finished' || first?.state === 'completed' || first?.state === 'canceled'
          );
        });

        const [first] = await harness.history(id);
        expect(settled.state).toBe(paused ? 'paused' : 'finished');
        if (first.state === 'completed') {
          expect(sightings.runs.get(id)).toBe(1);
        } else {
          expect(first.state).toBe('canceled');
          expect(sightings.runs.get(id)).toBeUndefined();
        }
      }
    });

    it('breaks on a deleted hero: the workflow is canceled as a prepare that read first decides', async () => {
      const { id, hero } = await wokenButHeld();
      await orders().delete(hero.id);
      const sent = await release(harness.waitForState(id, 'canceled'));

      expectReadFirstAfterFence(sent);
      expect(sightings.runs.get(id)).toBeUndefined();
      expect((await harness.history(id)).map((e) => `${e.stepName}:${e.state}`)).toEqual([
        'woken:canceled',
      ]);
    });
  },
);
