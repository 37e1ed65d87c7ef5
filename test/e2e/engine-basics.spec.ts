import { Order } from '../fixtures/order.entity';
import { StepJournal } from '../fixtures/step-journal';
import { ThreeStepWorkflow, VoidableWorkflow } from '../fixtures/basic.workflows';
import { testDatabaseLabel } from './support/database';
import { EngineHarness } from './support/engine-harness';

describe(`engine basics (${testDatabaseLabel} + BullMQ)`, () => {
  let harness: EngineHarness;
  let journal: StepJournal;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [ThreeStepWorkflow, VoidableWorkflow],
      providers: [StepJournal],
      entities: [Order],
    });
    journal = harness.get(StepJournal);
  });

  afterAll(() => harness?.close());

  beforeEach(() => journal.entries.splice(0));

  async function newOrder(status = 'new'): Promise<Order> {
    return harness.dataSource.getRepository(Order).save({ status });
  }

  it('creation schedules the first step and BullMQ runs the steps in order with hooks', async () => {
    const order = await newOrder();
    const workflow = await harness.service.start(ThreeStepWorkflow, { hero: order });
    expect(workflow.heroType).toBe('Order');
    expect(workflow.heroId).toBe(String(order.id));

    const finished = await harness.waitForState(workflow.id, 'finished');
    expect(finished.nextStepName).toBeNull();
    expect(journal.entries).toEqual([
      'before:first',
      `first:${order.id}`,
      'after:first',
      'before:second',
      'second',
      'after:second',
      'before:third',
      'third',
      'after:third',
    ]);
    const history = await harness.history(workflow.id);
    expect(history.map((e) => [e.stepName, e.state, e.outcome])).toEqual([
      ['first', 'completed', 'success'],
      ['second', 'completed', 'success'],
      ['third', 'completed', 'success'],
    ]);
    expect(history.every((e) => e.finishedAt instanceof Date && e.jobId === e.id)).toBe(true);
  });

  it('@CancelIf cancels the workflow before the step runs', async () => {
    const workflow = await harness.service.start(VoidableWorkflow, {
      hero: await newOrder('void'),
    });
    await harness.waitForState(workflow.id, 'canceled');
    const [execution] = await harness.history(workflow.id);
    expect([execution.state, execution.outcome]).toEqual(['canceled', 'canceled']);
    expect(journal.entries).toEqual([]);
  });
});
