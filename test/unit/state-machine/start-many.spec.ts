import { WorkflowAlreadyOngoingError } from '../../../lib';
import { rejectionOf, StateMachine } from './support/state-machine';
import { Customer, LinearWorkflow, StepLessWorkflow } from './support/state-machine.workflows';

/** `startMany()` on the in-memory adapter: the engine's rules without a database. */
describe('state machine: startMany', () => {
  let sm: StateMachine;

  beforeAll(async () => (sm = await StateMachine.boot()));
  afterAll(() => sm.close());

  function heroes(count: number): Customer[] {
    return Array.from({ length: count }, () => {
      const hero = new Customer();
      sm.repository.registerHero('Customer', hero.id, hero);
      return hero;
    });
  }

  const total = async () => (await sm.service.list({ workflow: LinearWorkflow })).length;

  it('creates the workflows in input order, one scheduled first execution and one job each, logged once', async () => {
    const customers = heroes(3);
    const linesBefore = sm.logger.lines.length;
    const created = await sm.service.startMany(
      LinearWorkflow,
      customers.map((hero) => ({ hero })),
    );
    expect(created.map((row) => row?.heroId)).toEqual(customers.map((c) => String(c.id)));
    for (const workflow of created) {
      const history = await sm.history(workflow!);
      expect(history.map((e) => `${e.stepName}:${e.state}`)).toEqual(['a:scheduled']);
      expect(sm.jobsFor(history[0])).toHaveLength(1);
      expect((await sm.find(workflow!)).nextStepName).toBe('a');
    }
    expect(sm.logger.lines.slice(linesBefore).filter((l) => l.includes('startMany'))).toHaveLength(
      1,
    );
    // The steps run as start()'s do.
    for (const workflow of created) {
      while ((await sm.find(workflow!)).state !== 'finished') await sm.runCurrent(workflow!);
      expect(await sm.trace(workflow!)).toEqual([
        'a:completed/success',
        'b:completed/success',
        'c:completed/success',
      ]);
    }
  });

  it("'error' rejects naming the ongoing and the duplicated heroes, and writes nothing", async () => {
    const [busy, twice, fresh] = heroes(3);
    await sm.service.start(LinearWorkflow, { hero: busy });
    const before = await total();
    const jobsBefore = sm.jobs().length;
    const error = await rejectionOf(
      sm.service.startMany(LinearWorkflow, [
        { hero: fresh },
        { hero: busy },
        { hero: twice },
        { hero: twice },
      ]),
    );
    expect(error).toBeInstanceOf(WorkflowAlreadyOngoingError);
    expect(error.message).toContain(`already exists for Customer ${busy.id}`);
    expect(error.message).toContain(`more than one entry is for Customer ${twice.id}`);
    expect(await total()).toBe(before);
    expect(sm.jobs().length).toBe(jobsBefore);
  });

  it("'skip' resolves null where an entry was left out; of duplicates the first wins", async () => {
    const [busy, twice, fresh] = heroes(3);
    await sm.service.start(LinearWorkflow, { hero: busy });
    const created = await sm.service.startMany(
      LinearWorkflow,
      [
        { hero: twice, metadata: { n: 1 } },
        { hero: busy },
        { hero: fresh },
        { hero: twice, metadata: { n: 2 } },
      ],
      { onConflict: 'skip' },
    );
    expect(created.map((row) => row?.heroId ?? null)).toEqual([
      String(twice.id),
      null,
      String(fresh.id),
      null,
    ]);
    expect(created[0]?.metadata).toEqual({ n: 1 });
  });

  it("'skip' leaves out a hero whose ongoing workflow is still uncommitted in another transaction (the index decides)", async () => {
    const [hero, other] = heroes(2);
    // A transaction holding an uncommitted ongoing row for hero, committed once the batch waits.
    let commit!: () => void;
    const held = new Promise<void>((resolve) => (commit = resolve));
    let inserted!: () => void;
    const insertedOnce = new Promise<void>((resolve) => (inserted = resolve));
    const holder = sm.repository.transaction(async (tx) => {
      await sm.repository.insertWorkflow(tx, {
        type: 'LinearWorkflow',
        heroType: 'Customer',
        heroId: String(hero.id),
        allowMultiple: false,
        metadata: null,
      });
      inserted();
      await held;
    });
    await insertedOnce;
    const racing = sm.service.startMany(LinearWorkflow, [{ hero: other }, { hero }], {
      onConflict: 'skip',
    });
    commit();
    await holder;
    expect((await racing).map((row) => row?.heroId ?? null)).toEqual([String(other.id), null]);
  });

  it('finishes workflows without steps at once, as start() does: no execution, no job', async () => {
    const customers = heroes(2);
    const jobsBefore = sm.jobs().length;
    const created = await sm.service.startMany(
      StepLessWorkflow,
      customers.map((hero) => ({ hero })),
    );
    for (const workflow of created) {
      expect((await sm.find(workflow!)).state).toBe('finished');
      expect(await sm.history(workflow!)).toEqual([]);
    }
    expect(sm.jobs().length).toBe(jobsBefore);
    // Finished, so the same heroes can start again.
    expect(
      await sm.service.startMany(
        StepLessWorkflow,
        customers.map((hero) => ({ hero })),
      ),
    ).toHaveLength(2);
  });
});
