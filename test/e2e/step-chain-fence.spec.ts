import { Injectable } from '@nestjs/common';
import type { DataSource, Logger } from 'typeorm';
import { Step, Workflow, type StepContext } from '../../lib';
import { Order } from '../fixtures/order.entity';
import { describeIf } from './support/describe-if';
import { EngineHarness } from './support/engine-harness';
import { testDatabase } from './support/database';
import { splitStatements } from './support/sql-text';
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

/** Every SQL message the DataSource's logger sees, split into statements. */
function recordMessages(dataSource: DataSource): string[][] {
  const messages: string[][] = [];
  const logger = dataSource.logger;
  const recording: Logger = Object.assign(Object.create(logger) as Logger, {
    logQuery: (...args: Parameters<Logger['logQuery']>) => {
      messages.push(splitStatements(args[0]));
      logger.logQuery(...args);
    },
  });
  // `logger` is read-only in TypeORM's typings but a plain property at run time.
  Object.assign(dataSource, { logger: recording });
  return messages;
}

const isFence = (statement: string) =>
  statement.startsWith("SELECT set_config('geneva_drive.step_fence'");

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
    /** The messages of `first`'s finalize: fenced, then (when broken) the run that read first. */
    const finalizeOfFirst = (sent: string[][]) => {
      const fenced = sent.findIndex((statements) => statements.some(isFence));
      return { fenced: sent[fenced], rerun: sent[fenced + 1] };
    };

    beforeAll(async () => {
      harness = await EngineHarness.boot({
        workflows: [FenceWorkflow],
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
      const paused = await harness.waitForWorkflow(
        workflow.id,
        async (row) =>
          row.state === 'paused' && (await steps(row.id))[0] === 'first:completed/success',
      );

      expect(paused.nextStepName).toBe('second');
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
      await harness.waitForWorkflow(
        workflow.id,
        async (row) => row.state === 'canceled' && (await steps(row.id)).length === 2,
      );
      expect(await steps(workflow.id)).toEqual([
        'first:completed/success',
        'second:canceled/canceled',
      ]);
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
