import { DataSource } from 'typeorm';
import { GENEVA_DRIVE_MIGRATIONS, MissingMigrationError } from '../../lib';
import { Order } from '../fixtures/order.entity';
import { IterationScript, TenItemsWorkflow } from '../fixtures/resumable.workflows';
import { PaymentWorkflow } from '../fixtures/signal.workflows';
import { ScriptedWorkflow } from '../fixtures/scripted.workflows';
import { StepScript } from '../fixtures/step-script';
import { dataSourceOptions, testDatabaseLabel } from './support/database';
import { EngineHarness } from './support/engine-harness';

/**
 * Code deployed before its migration: with only the base schema, plain workflows work, and
 * resumable or `waitFor` steps fail with MissingMigrationError until the migrations run.
 */
describe(`graceful degradation without the resumable and signals migrations (${testDatabaseLabel})`, () => {
  let harness: EngineHarness;

  beforeAll(async () => {
    harness = await EngineHarness.boot({
      workflows: [ScriptedWorkflow, TenItemsWorkflow, PaymentWorkflow],
      providers: [StepScript, IterationScript],
      entities: [Order],
      migrations: GENEVA_DRIVE_MIGRATIONS.slice(0, 1),
    });
  });

  afterAll(() => harness?.close());

  const newOrder = () => harness.dataSource.getRepository(Order).save({ status: 'new' });

  it('plain workflows run, pause and resume', async () => {
    const workflow = await harness.service.start(ScriptedWorkflow, { hero: await newOrder() });
    await harness.waitForState(workflow.id, 'finished');
    expect(await harness.history(workflow.id)).toHaveLength(3);
  });

  it('a resumable step and a waitFor step fail with MissingMigrationError and pause; signal() refuses', async () => {
    const resumable = await harness.service.start(TenItemsWorkflow, { hero: await newOrder() });
    await harness.waitForState(resumable.id, 'paused');
    const [failed] = await harness.history(resumable.id);
    expect([failed.state, failed.errorClassName]).toEqual(['failed', 'MissingMigrationError']);
    expect(failed.errorMessage).toContain('resumable-steps migration has not run');

    const waiting = await harness.service.start(PaymentWorkflow, { hero: await newOrder() });
    await harness.waitForState(waiting.id, 'paused');
    const last = (await harness.history(waiting.id)).at(-1)!;
    expect([last.stepName, last.errorClassName]).toEqual(['capture', 'MissingMigrationError']);
    await expect(harness.service.signal(waiting, 'payment')).rejects.toThrow(MissingMigrationError);
  });

  it('once the migrations run, resume() picks the features up without a restart', async () => {
    const workflow = await harness.service.start(TenItemsWorkflow, { hero: await newOrder() });
    await harness.waitForState(workflow.id, 'paused');
    const migrator = new DataSource({
      ...dataSourceOptions(harness.schema, [Order]),
      synchronize: false,
      migrationsRun: false,
    });
    await migrator.initialize();
    await migrator.runMigrations();
    await migrator.destroy();
    await harness.service.resume(workflow);
    await harness.waitForState(workflow.id, 'finished');
    const history = await harness.history(workflow.id);
    expect(
      history.filter((e) => e.stepName === 'process' && e.outcome === 'continued'),
    ).toHaveLength(3);
  });
});
