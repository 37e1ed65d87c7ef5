import { WorkflowAlreadyOngoingError } from '../../../lib';
import { InMemoryDatabaseError } from '../../../lib/adapters/memory/in-memory-database.error';
import { InMemoryWorkflowRepository } from '../../../lib/adapters/memory/in-memory-workflow.repository';
import type { RepositoryTransaction } from '../../../lib/ports/workflow.repository';
import type { StepJob } from '../../../lib/queue/step-job.interface';
import { isTransientDatabaseError } from '../../../lib/common/transient-database-error';
import { Deferred } from './support/deferred';
import { StateMachine, rejectionOf } from './support/state-machine';
import { Customer, LinearWorkflow } from './support/state-machine.workflows';

/** One full turn of the event loop: whatever could run meanwhile has run. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The in-memory adapter itself: the guarantees the state-machine tests lean on (atomic commit,
 * rollback, row locks, unique indexes, after-commit jobs, copies).
 */
describe('InMemoryWorkflowRepository', () => {
  let repo: InMemoryWorkflowRepository;
  let committed: StepJob[][];

  beforeEach(() => {
    committed = [];
    repo = new InMemoryWorkflowRepository({
      onCommittedJobs: (jobs) => void committed.push([...jobs]),
    });
  });

  const heroWorkflow = (heroId: string, extra: { allowMultiple?: boolean } = {}) => ({
    type: 'W',
    heroType: 'Customer',
    heroId,
    allowMultiple: extra.allowMultiple ?? false,
    metadata: null,
  });

  const job = (stepExecutionId: string, workflowId: string): StepJob => ({
    jobId: stepExecutionId,
    stepExecutionId,
    workflowId,
    queue: 'geneva-drive',
    delay: 0,
  });

  async function newWorkflow(heroId = 'h1') {
    return repo.transaction(async (tx) => {
      const workflow = await repo.insertWorkflow(tx, heroWorkflow(heroId));
      const execution = await repo.insertExecution(tx, {
        workflowId: workflow.id,
        stepName: 'a',
        scheduledFor: new Date(),
      });
      return { workflow, execution };
    });
  }

  it('commits all of a transaction at once, and a transaction that throws leaves nothing, jobs included', async () => {
    let ids: { workflowId: string; executionId: string } | null = null;
    const error = await rejectionOf(
      repo.transaction(async (tx) => {
        const workflow = await repo.insertWorkflow(tx, heroWorkflow('h1'));
        const execution = await repo.insertExecution(tx, {
          workflowId: workflow.id,
          stepName: 'a',
          scheduledFor: new Date(),
        });
        await tx.enqueue(job(execution.id, workflow.id));
        ids = { workflowId: workflow.id, executionId: execution.id };
        throw new Error('rolled back');
      }),
    );
    expect(error.message).toBe('rolled back');
    expect(await repo.findWorkflow(ids!.workflowId)).toBeNull();
    expect(await repo.findExecution(ids!.executionId)).toBeNull();
    expect(committed).toEqual([]);
    expect(repo.openTransactionCount).toBe(0);
  });

  it('hands jobs to the sink only once their transaction has committed', async () => {
    const seenAtHandOff: unknown[] = [];
    repo.onCommittedJobs(async (jobs) => {
      for (const handed of jobs)
        seenAtHandOff.push(await repo.findExecution(handed.stepExecutionId));
    });
    const { workflow, execution } = await repo.transaction(async (tx) => {
      const created = await newWorkflowIn(tx);
      await tx.enqueue(job(created.execution.id, created.workflow.id));
      expect(seenAtHandOff).toEqual([]);
      expect(await repo.findWorkflow(created.workflow.id)).toBeNull();
      return created;
    });
    expect(seenAtHandOff).toEqual([expect.objectContaining({ id: execution.id })]);
    expect(repo.enqueuedJobs()).toEqual([job(execution.id, workflow.id)]);
  });

  it('runs after-commit work once committed and before the jobs are handed off; never after a rollback', async () => {
    const order: string[] = [];
    repo.onCommittedJobs(
      (jobs) => void order.push(...jobs.map((handed) => `sink:${handed.jobId}`)),
    );
    const created = await repo.transaction(async (tx) => {
      const made = await newWorkflowIn(tx);
      await tx.enqueue(job(made.execution.id, made.workflow.id));
      tx.afterCommit(() => order.push('after-commit'));
      return made;
    });
    expect(order).toEqual(['after-commit', `sink:${created.execution.id}`]);

    order.length = 0;
    await expect(
      repo.transaction((tx) => {
        tx.afterCommit(() => order.push('rolled back'));
        return Promise.reject(new Error('undo'));
      }),
    ).rejects.toThrow('undo');
    await repo.transaction(async (outer) => {
      await expect(
        repo.transaction(
          (tx) => {
            tx.afterCommit(() => order.push('savepoint undone'));
            return Promise.reject(new Error('undo savepoint'));
          },
          { caller: outer },
        ),
      ).rejects.toThrow('undo savepoint');
      await repo.transaction(
        (tx) => Promise.resolve(tx.afterCommit(() => order.push('savepoint kept'))),
        { caller: outer },
      );
      expect(order).toEqual([]);
    });
    expect(order).toEqual(['savepoint kept']);
  });

  async function newWorkflowIn(tx: RepositoryTransaction, heroId = 'h1') {
    const workflow = await repo.insertWorkflow(tx, heroWorkflow(heroId));
    const execution = await repo.insertExecution(tx, {
      workflowId: workflow.id,
      stepName: 'a',
      scheduledFor: new Date(),
    });
    return { workflow, execution };
  }

  it('serializes two transactions that lock the same workflow; the second sees the first commit', async () => {
    const { workflow } = await newWorkflow();
    const holding = new Deferred();
    const release = new Deferred();
    const first = repo.transaction(async (tx) => {
      const locked = await repo.lockWorkflow(tx, workflow.id);
      holding.resolve();
      await release.promise;
      await repo.updateWorkflow(tx, locked!, { state: 'paused' });
    });
    await holding.promise;
    let secondSaw: string | null = null;
    const second = repo.transaction(async (tx) => {
      secondSaw = (await repo.lockWorkflow(tx, workflow.id))!.state;
    });
    await turn();
    expect(secondSaw).toBeNull();

    release.resolve();
    await Promise.all([first, second]);
    expect(secondSaw).toBe('paused');
  });

  it('refuses a wait that closes a cycle with a deadlock error the engine retries', async () => {
    const one = await newWorkflow('h1');
    const two = await newWorkflow('h2');
    const bothLocked = new Deferred();
    let locked = 0;
    const lockBoth = (first: string, second: string) =>
      repo.transaction(async (tx) => {
        await repo.lockWorkflow(tx, first);
        if (++locked === 2) bothLocked.resolve();
        await bothLocked.promise;
        await repo.lockWorkflow(tx, second);
      });
    const results = await Promise.allSettled([
      lockBoth(one.workflow.id, two.workflow.id),
      lockBoth(two.workflow.id, one.workflow.id),
    ]);
    const failed = results.filter((result) => result.status === 'rejected');
    expect(failed).toHaveLength(1);
    const reason = failed[0].reason as InMemoryDatabaseError;
    expect([reason.kind, repo.isDatabaseError(reason), isTransientDatabaseError(reason)]).toEqual([
      'deadlock_detected',
      true,
      true,
    ]);
  });

  it('enforces one ongoing workflow per type and hero, unless allowMultiple; ended and heroless ones never collide', async () => {
    const { workflow } = await newWorkflow('h1');
    const error = await rejectionOf(
      repo.transaction((tx) => repo.insertWorkflow(tx, heroWorkflow('h1'))),
    );
    expect(error).toBeInstanceOf(InMemoryDatabaseError);
    expect([repo.isUniqueViolation(error), repo.isDatabaseError(error)]).toEqual([true, true]);
    expect(repo.isUniqueViolation(new Error('other'))).toBe(false);

    await repo.transaction(async (tx) => {
      await repo.insertWorkflow(tx, heroWorkflow('h1', { allowMultiple: true }));
      await repo.insertWorkflow(tx, { ...heroWorkflow('h1'), heroType: null, heroId: null });
      await repo.insertWorkflow(tx, { ...heroWorkflow('h1'), heroType: null, heroId: null });
      await repo.insertWorkflow(tx, { ...heroWorkflow('h1'), type: 'OtherType' });
    });
    await repo.transaction(async (tx) => {
      const locked = await repo.lockWorkflow(tx, workflow.id);
      await repo.updateWorkflow(tx, locked!, { state: 'finished' });
      await repo.insertWorkflow(tx, heroWorkflow('h1'));
    });
    expect(
      await repo.listWorkflows({ hero: { heroType: 'Customer', heroId: 'h1' }, type: 'W' }),
    ).toHaveLength(3);
  });

  it('makes a concurrent insert of the same key wait: it fails if the first commits, succeeds if it rolls back', async () => {
    for (const firstCommits of [true, false]) {
      const heroId = `race-${String(firstCommits)}`;
      const inserted = new Deferred();
      const release = new Deferred();
      const first = repo.transaction(async (tx) => {
        await repo.insertWorkflow(tx, heroWorkflow(heroId));
        inserted.resolve();
        await release.promise;
        if (!firstCommits) throw new Error('first rolls back');
      });
      await inserted.promise;
      let secondDone = false;
      const second = repo
        .transaction((tx) => repo.insertWorkflow(tx, heroWorkflow(heroId)))
        .finally(() => (secondDone = true));
      await turn();
      expect(secondDone).toBe(false);

      release.resolve();
      const [firstResult, secondResult] = await Promise.allSettled([first, second]);
      expect([firstResult.status, secondResult.status]).toEqual(
        firstCommits ? ['fulfilled', 'rejected'] : ['rejected', 'fulfilled'],
      );
      if (firstCommits)
        expect(repo.isUniqueViolation((secondResult as PromiseRejectedResult).reason)).toBe(true);
    }
  });

  it('enforces one scheduled or in_progress execution per workflow; executions need their workflow', async () => {
    const { workflow, execution } = await newWorkflow();
    const second = { workflowId: workflow.id, stepName: 'b', scheduledFor: new Date() };
    const error = await rejectionOf(repo.transaction((tx) => repo.insertExecution(tx, second)));
    expect(repo.isUniqueViolation(error)).toBe(true);

    await repo.transaction(async (tx) => {
      await repo.lockWorkflow(tx, workflow.id);
      const current = await repo.currentExecution(tx, workflow.id);
      expect(current!.id).toBe(execution.id);
      await repo.updateExecution(tx, current!, { state: 'waiting' });
      await repo.insertExecution(tx, second);
      // Waking the parked one now would make two active executions.
      const waking = await rejectionOf(repo.updateExecution(tx, current!, { state: 'scheduled' }));
      expect(repo.isUniqueViolation(waking)).toBe(true);
    });
    const orphan = await rejectionOf(
      repo.transaction((tx) =>
        repo.insertExecution(tx, { ...second, workflowId: '01900000-0000-7000-8000-000000000000' }),
      ),
    );
    expect([(orphan as InMemoryDatabaseError).kind, repo.isUniqueViolation(orphan)]).toEqual([
      'foreign_key_violation',
      false,
    ]);
  });

  it('returns the stored signal with duplicateDelivery for a known idempotency key, inserting nothing', async () => {
    const { workflow } = await newWorkflow();
    const fields = {
      workflowId: workflow.id,
      name: 'paid',
      idempotencyKey: 'k1',
      payload: { n: 1 },
    };
    const first = await repo.transaction((tx) => repo.insertSignal(tx, fields));
    const again = await repo.transaction((tx) =>
      repo.insertSignal(tx, { ...fields, payload: { n: 2 } }),
    );
    expect([again.id, again.duplicateDelivery, again.payload]).toEqual([first.id, true, { n: 1 }]);
    expect(first.duplicateDelivery).toBe(false);
    const stored = await repo.signalsOf(workflow.id);
    expect(stored.map((s) => [s.id, s.duplicateDelivery])).toEqual([[first.id, false]]);
    // Without a key, every delivery is a row of its own.
    await repo.transaction(async (tx) => {
      await repo.insertSignal(tx, { ...fields, idempotencyKey: null });
      await repo.insertSignal(tx, { ...fields, idempotencyKey: null });
    });
    expect(await repo.signalsOf(workflow.id)).toHaveLength(3);
  });

  it('returns copies: mutating an entity changes nothing stored; writes update the entity and updated_at', async () => {
    const stamp = new Date('2030-01-01T00:00:00.000Z');
    const { workflow } = await newWorkflow();
    const read = (await repo.findWorkflow(workflow.id))!;
    read.state = 'canceled';
    read.metadata = { mutated: true };
    expect((await repo.findWorkflow(workflow.id))!.state).toBe('ready');

    const clocked = new InMemoryWorkflowRepository({ clock: () => new Date(stamp) });
    const row = await clocked.transaction(async (tx) => {
      const created = await clocked.insertWorkflow(tx, heroWorkflow('h9'));
      await clocked.updateWorkflow(tx, created, {
        metadata: { at: new Date(stamp), keep: 'as sent' },
      });
      return created;
    });
    expect(row.metadata).toEqual({ at: stamp, keep: 'as sent' });
    const stored = (await clocked.findWorkflow(row.id))!;
    expect(stored).not.toBe(row);
    // JSON columns come back as JSON: a Date becomes its ISO string.
    expect(stored.metadata).toEqual({ at: stamp.toISOString(), keep: 'as sent' });
    expect(stored.updatedAt).toEqual(stamp);
    expect(stored.updatedAt).not.toBe(row.updatedAt);
  });

  it('keeps a cursor checkpoint written while a transaction changes other columns of the row', async () => {
    const { workflow, execution } = await newWorkflow();
    const written = new Deferred();
    const finalize = repo.transaction(async (tx) => {
      const { execution: locked } = await repo.lockForStep(tx, workflow.id, execution.id);
      await written.promise;
      await repo.updateExecution(tx, locked!, { state: 'completed', outcome: 'continued' });
    });
    expect(await repo.writeCursor(execution, { page: 3, at: new Date(0) })).toBe('ready');
    written.resolve();
    await finalize;
    const stored = (await repo.findExecution(execution.id))!;
    expect([stored.state, stored.cursor]).toEqual(['completed', { page: 3, at: new Date(0) }]);
  });

  it('runs work with a caller transaction in a savepoint: undone alone, its jobs wait for the outer commit', async () => {
    const outcome = await repo.transaction(async (outer) => {
      const kept = await newWorkflowIn(outer, 'kept');
      const failed = await rejectionOf(
        repo.transaction(
          async (inner) => {
            const created = await newWorkflowIn(inner, 'undone');
            await inner.enqueue(job(created.execution.id, created.workflow.id));
            throw new Error('inner fails');
          },
          { caller: outer },
        ),
      );
      await repo.transaction((inner) => inner.enqueue(job(kept.execution.id, kept.workflow.id)), {
        caller: outer,
      });
      expect(committed).toEqual([]);
      return { kept, failed };
    });
    expect(outcome.failed.message).toBe('inner fails');
    expect(await repo.listWorkflows({})).toEqual([
      expect.objectContaining({ id: outcome.kept.workflow.id }),
    ]);
    expect(committed).toEqual([[job(outcome.kept.execution.id, outcome.kept.workflow.id)]]);
  });

  it('serves the housekeeping reads with their filters and order', async () => {
    const clockNow = new Date();
    const old = new Date(clockNow.getTime() - 86_400_000);
    const a = await newWorkflow('hk-a');
    const b = await newWorkflow('hk-b');
    const c = await newWorkflow('hk-c');
    await repo.transaction(async (tx) => {
      const locked = await repo.lockWorkflow(tx, a.workflow.id);
      await repo.updateWorkflow(tx, locked!, { state: 'finished', transitionedAt: old });
      const execution = (await repo.currentExecution(tx, b.workflow.id))!;
      await repo.updateExecution(tx, execution, { state: 'waiting', waitingSince: old });
    });
    await repo.transaction(async (tx) => {
      await repo.insertSignal(tx, {
        workflowId: a.workflow.id,
        name: 's',
        idempotencyKey: null,
        payload: null,
      });
    });

    expect(await repo.workflowCounts()).toEqual(
      expect.arrayContaining([
        { type: 'W', state: 'finished', count: 1 },
        { type: 'W', state: 'ready', count: 2 },
      ]),
    );
    expect(await repo.waitingCounts(clockNow)).toEqual([{ type: 'W', count: 1 }]);
    expect(await repo.waitingCounts(old)).toEqual([]);
    // Only scheduled executions of runnable workflows, due before the cutoff, oldest first.
    const soon = new Date(clockNow.getTime() + 60_000);
    expect((await repo.stuckExecutions('scheduled', soon, 10, null)).map((e) => e.id)).toEqual([
      c.execution.id,
    ]);
    expect(await repo.stuckExecutions('scheduled', old, 10, null)).toEqual([]);
    expect(
      await repo.stuckExecutions('scheduled', soon, 10, {
        at: c.execution.scheduledFor,
        id: c.execution.id,
      }),
    ).toEqual([]);
    expect(await repo.stuckExecutions('in_progress', soon, 10, null)).toEqual([]);
    const page = await repo.scheduledExecutions(soon, 10, null);
    expect(page.executions.map((e) => e.id)).toEqual([c.execution.id]);
    expect([...page.workflows.keys()]).toEqual([c.workflow.id]);
    expect(await repo.finishedWorkflowIds(clockNow, 10)).toEqual([a.workflow.id]);
    expect(await repo.deleteChildren('signals', [a.workflow.id], 10)).toBe(1);
    expect(await repo.deleteFinishedWorkflows([a.workflow.id, b.workflow.id], clockNow)).toBe(1);
    expect(await repo.findWorkflow(a.workflow.id)).toBeNull();
    // The cascade took the execution along.
    expect(await repo.findExecution(a.execution.id)).toBeNull();
    expect(await repo.findWorkflow(b.workflow.id)).not.toBeNull();
  });

  describe('behind the engine', () => {
    let sm: StateMachine;
    beforeAll(async () => (sm = await StateMachine.boot()));
    afterAll(() => sm.close());

    it('start() turns the ongoing-hero violation into WorkflowAlreadyOngoingError, also when raced', async () => {
      const hero = new Customer();
      await sm.start(LinearWorkflow, hero);
      expect(await rejectionOf(sm.start(LinearWorkflow, hero))).toBeInstanceOf(
        WorkflowAlreadyOngoingError,
      );

      const raced = new Customer();
      const results = await Promise.allSettled([
        sm.start(LinearWorkflow, raced),
        sm.start(LinearWorkflow, raced),
      ]);
      expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
      expect(
        (results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason,
      ).toBeInstanceOf(WorkflowAlreadyOngoingError);
    });

    it('start() inside a caller transaction enqueues only if and after that transaction commits', async () => {
      const hero = new Customer();
      sm.repository.registerHero('Customer', hero.id, hero);
      const jobsBefore = sm.jobs().length;
      await rejectionOf(
        sm.repository.transaction(async (tx) => {
          await sm.service.start(LinearWorkflow, { hero, manager: tx as never });
          throw new Error('caller rolls back');
        }),
      );
      expect(await sm.service.list({ workflow: LinearWorkflow, hero })).toEqual([]);
      expect(sm.jobs()).toHaveLength(jobsBefore);

      const workflow = await sm.repository.transaction(async (tx) => {
        const started = await sm.service.start(LinearWorkflow, { hero, manager: tx as never });
        expect(sm.jobs()).toHaveLength(jobsBefore);
        return started;
      });
      expect(sm.jobsFor(await sm.current(workflow))).toHaveLength(1);
    });
  });
});
