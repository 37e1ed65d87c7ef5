import { InMemoryDatabaseError } from '../../../lib/adapters/memory/in-memory-database.error';
import type { RepositoryTransaction } from '../../../lib/ports/workflow.repository';
import { StateMachine, rejectionOf } from './support/state-machine';
import { Customer, LinearWorkflow, PaymentWorkflow } from './support/state-machine.workflows';

type Work = (tx: RepositoryTransaction) => Promise<unknown>;

/**
 * A public call whose transaction loses a lock conflict (a deadlock victim: on MariaDB a signal
 * and a firing wait timeout, or two steps of neighbouring workflows in one index) runs it again by
 * itself; a lost connection is not run again, as the commit may have gone through.
 */
describe('state machine: public calls and lost lock conflicts', () => {
  let sm: StateMachine;

  beforeAll(async () => (sm = await StateMachine.boot()));
  afterAll(() => sm.close());
  afterEach(() => jest.restoreAllMocks());

  /** The next transaction does all its work, then fails with `error` and rolls back. */
  function failNextTransactionWith(error: Error): jest.SpyInstance {
    const repository = sm.repository;
    const transaction = repository.transaction.bind(repository);
    return jest
      .spyOn(repository, 'transaction')
      .mockImplementationOnce((work: Work, options?: object) =>
        transaction(async (tx) => {
          await work(tx);
          throw error;
        }, options),
      );
  }

  const deadlock = () => new InMemoryDatabaseError('deadlock_detected', 'deadlock detected');
  const connectionLost = () =>
    Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });

  async function parkedPayment() {
    const { workflow, hero } = await sm.start(PaymentWorkflow);
    await sm.runCurrent(workflow);
    await sm.runCurrent(workflow);
    expect((await sm.current(workflow)).state).toBe('waiting');
    return { workflow, hero };
  }

  it('signal() delivers once after a lost deadlock, and wakes the parked step', async () => {
    const { workflow } = await parkedPayment();
    const spy = failNextTransactionWith(deadlock());

    const signal = await sm.service.signal(workflow, 'payment', { payload: { amount: 7 } });

    expect(spy).toHaveBeenCalledTimes(2);
    expect((await sm.signals(workflow)).map((stored) => stored.id)).toEqual([signal.id]);
    expect((await sm.current(workflow)).state).toBe('scheduled');
  });

  it('signal() does not run again after a lost connection: the error reaches the caller', async () => {
    const { workflow } = await parkedPayment();
    const lost = connectionLost();
    const spy = failNextTransactionWith(lost);

    expect(await rejectionOf(sm.service.signal(workflow, 'payment'))).toBe(lost);

    expect(spy).toHaveBeenCalledTimes(1);
    expect(await sm.signals(workflow)).toEqual([]);
  });

  it('start() creates one workflow after a lost deadlock', async () => {
    const hero = new Customer();
    sm.repository.registerHero('Customer', hero.id, hero);
    const spy = failNextTransactionWith(deadlock());

    const workflow = await sm.service.start(LinearWorkflow, { hero });

    expect(spy).toHaveBeenCalledTimes(2);
    const ongoing = await sm.service.list({ hero });
    expect(ongoing.map((found) => found.id)).toEqual([workflow.id]);
    expect(await sm.trace(workflow)).toEqual(['a:scheduled/null']);
  });

  it('an operator verb (pause) succeeds after a lost deadlock', async () => {
    const { workflow } = await sm.start(LinearWorkflow);
    const spy = failNextTransactionWith(deadlock());

    const paused = await sm.service.pause(workflow);

    expect(spy).toHaveBeenCalledTimes(2);
    expect(paused.state).toBe('paused');
  });
});
