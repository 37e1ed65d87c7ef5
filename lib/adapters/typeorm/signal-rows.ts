import { Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { SignalEntity } from '../../entities/signal.entity';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import { isUniqueViolation, lockingRead } from './sql-dialect';
import { ExecutionColumns } from './execution-columns';
import type { UnitOfWork } from './unit-of-work';
import { newSignalRow } from '../../entities/new-rows';
import type { PartialRow } from './partial-row';
import type { PostgresQueryBatch } from '../postgres/postgres-query-batch';
import type {
  AtOnceSignalDelivery,
  AtOnceSignalOutcome,
  SignalDeliveryRows,
  WokenExecution,
} from '../../ports/workflow.repository';
import { SignalDeliveryStatements, WOKEN_PROPERTIES } from '../postgres/signal-delivery.statements';
import { stateLiterals } from '../postgres/library-table';

/** The row `wake` returned, as a WokenExecution; a row without its job id is refused. */
function wokenExecution(row: StepExecutionEntity): WokenExecution {
  const woken = Object.fromEntries(
    WOKEN_PROPERTIES.map((property) => [property, row[property]]),
  ) as Omit<WokenExecution, 'row'>;
  if (typeof woken.jobId !== 'string')
    throw new Error(`The signal woke execution ${woken.id} without setting its job id.`);
  return { ...woken, row };
}

/**
 * Reads and writes of signal rows. Every caller holds the workflow row lock, so reads that decide
 * a transition see every committed signal of the workflow; on MariaDB/MySQL they are also locking
 * reads (`uow.lockingReads`, SPEC §15.10).
 */
@Injectable()
export class SignalRows {
  constructor(private readonly columns: ExecutionColumns) {}

  /** The duplicate-signal lookup. */
  async findByKey(
    uow: UnitOfWork,
    workflowId: string,
    name: string,
    idempotencyKey: string,
  ): Promise<SignalEntity | null> {
    return lockingRead(
      uow,
      (await uow.manager())
        .createQueryBuilder(SignalEntity, 'signal')
        .where('signal.workflowId = :workflowId', { workflowId })
        .andWhere('signal.name = :name', { name })
        .andWhere('signal.idempotencyKey = :idempotencyKey', { idempotencyKey }),
    ).getOne();
  }

  /**
   * PostgreSQL's batched `signal()`: the workflow lock, the duplicate lookup and the parked
   * executions in one round trip with the transaction's opening. The two reads run after the
   * lock is granted (statements run in order) and, in READ COMMITTED, see every delivery that
   * committed before it.
   */
  async lockForDelivery(
    batch: PostgresQueryBatch,
    workflowId: string,
    name: string,
    idempotencyKey: string | null,
  ): Promise<SignalDeliveryRows> {
    const { workflows, executions, signals } = batch.tables;
    const reads = [
      workflows.selectById(workflowId, true),
      executions.selectWhere(
        { workflowId, state: stateLiterals('waiting') },
        ['createdAt', 'id'],
        false,
      ),
    ];
    if (idempotencyKey !== null)
      reads.push(signals.selectWhere({ workflowId, name, idempotencyKey }, [], false));
    const [workflowRead, waitingRead, duplicateRead] = await batch.readTogether(reads);
    const workflowRow = workflowRead.rows[0];
    if (!workflowRow) return { workflow: null, duplicate: null, waiting: [] };
    const duplicateRow = duplicateRead?.rows[0];
    return {
      workflow: workflows.hydrate(workflowRow),
      duplicate: duplicateRow ? signals.hydrate(duplicateRow) : null,
      waiting: waitingRead.rows.map((row) => executions.hydrate(row)),
    };
  }

  /**
   * PostgreSQL's `deliverSignalAtOnce`: the opening, the workflow lock, the duplicate lookup and
   * the guarded writes of SignalDeliveryStatements with the COMMIT, one round trip. What the
   * guards decided is read back from the locked rows and the writes' results.
   */
  async deliverAtOnce(
    uow: UnitOfWork,
    batch: PostgresQueryBatch,
    delivery: AtOnceSignalDelivery,
  ): Promise<AtOnceSignalOutcome> {
    uow.signalsWritten();
    const { workflows, executions, signals } = batch.tables;
    const { workflowId, name, idempotencyKey, payload } = delivery;
    const at = new Date();
    const signal = newSignalRow(uuidv7(), { workflowId, name, idempotencyKey, payload }, at);
    const writes = new SignalDeliveryStatements(batch.tables);
    const duplicateLookup =
      idempotencyKey === null
        ? []
        : [signals.selectWhere({ workflowId, name, idempotencyKey }, [], false)];
    // No step waits for this name: nothing to wake, the signal is buffered.
    const wake =
      delivery.wakes.length > 0 ? [writes.wake(signal, delivery.wakes, delivery.undecided)] : [];
    const results = await batch.commitWith([
      workflows.selectById(workflowId, true),
      ...duplicateLookup,
      ...wake,
      writes.insert(signal, delivery.undecided),
    ]);
    const [workflowRead] = results;
    const inserted = results[results.length - 1];
    const wokenRows = wake.length > 0 ? results[results.length - 2].rows : [];
    const duplicateRow = duplicateLookup.length > 0 ? results[1].rows[0] : undefined;
    if (!workflowRead.rows[0]) return { kind: 'missing' };
    const workflow = workflows.hydrate(workflowRead.rows[0]);
    if (duplicateRow) {
      const duplicate = signals.hydrate(duplicateRow);
      duplicate.duplicateDelivery = true;
      return { kind: 'duplicate', signal: duplicate };
    }
    if (workflow.state === 'finished' || workflow.state === 'canceled')
      return { kind: 'not-ongoing', workflow };
    if (inserted.rowCount === 0) return { kind: 'undecided' };
    const wokenExecutions = wokenRows
      .map((row) => wokenExecution(executions.hydrate(row)))
      .sort(
        (a, b) =>
          a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
    if (wokenExecutions.length > 0)
      Object.assign(signal, { claimed: wokenExecutions.length, state: 'claimed', claimedAt: at });
    return { kind: 'delivered', workflow, signal, woken: wokenExecutions };
  }

  async findById(uow: UnitOfWork, id: string): Promise<SignalEntity | null> {
    const readAhead = uow.takeSignalReadAhead(id);
    if (readAhead) return readAhead.signal;
    return lockingRead(
      uow,
      (await uow.manager())
        .createQueryBuilder(SignalEntity, 'signal')
        .where('signal.id = :id', { id }),
    ).getOne();
  }

  /** Signals not yet consumed, oldest first (FIFO). */
  async attachable(uow: UnitOfWork, workflowId: string): Promise<SignalEntity[]> {
    return lockingRead(
      uow,
      (await uow.manager())
        .createQueryBuilder(SignalEntity, 'signal')
        .where('signal.workflowId = :workflowId', { workflowId })
        .andWhere("signal.state <> 'consumed'")
        .orderBy('signal.createdAt', 'ASC')
        .addOrderBy('signal.id', 'ASC'),
    ).getMany();
  }

  /** Executions parked waiting for a signal, oldest first. */
  async waitingExecutions(uow: UnitOfWork, workflowId: string): Promise<StepExecutionEntity[]> {
    return lockingRead(
      uow,
      this.columns
        .selectOn(
          (await uow.manager()).createQueryBuilder(StepExecutionEntity, 'execution'),
          'execution',
        )
        .where('execution.workflowId = :workflowId', { workflowId })
        .andWhere("execution.state = 'waiting'")
        .orderBy('execution.createdAt', 'ASC')
        .addOrderBy('execution.id', 'ASC'),
    ).getMany();
  }

  /** Every execution ever attached to the signal. */
  async attachedExecutions(uow: UnitOfWork, signalId: string): Promise<StepExecutionEntity[]> {
    if (uow.batch) {
      // With the held-back writes in the same round trip, so the read sees them.
      const { executions } = uow.batch.tables;
      const [read] = await uow.batch.readTogether([
        executions.selectWhere({ signalId }, ['createdAt', 'id'], false),
      ]);
      return read.rows.map((row) => executions.hydrate(row));
    }
    return lockingRead(
      uow,
      this.columns
        .selectOn(
          (await uow.manager()).createQueryBuilder(StepExecutionEntity, 'execution'),
          'execution',
        )
        .where('execution.signalId = :signalId', { signalId })
        .orderBy('execution.createdAt', 'ASC')
        .addOrderBy('execution.id', 'ASC'),
    ).getMany();
  }

  /**
   * Inserts a pending signal. With an idempotency key, a row already holding that key wins: it is
   * returned with `duplicateDelivery = true` and nothing is inserted.
   */
  async insert(
    uow: UnitOfWork,
    fields: Pick<SignalEntity, 'workflowId' | 'name' | 'idempotencyKey' | 'payload'>,
  ): Promise<SignalEntity> {
    uow.signalsWritten();
    const now = new Date();
    const signal = newSignalRow(uuidv7(), fields, now);
    const { duplicateDelivery: _notAColumn, ...row } = signal;
    if (uow.batch) {
      // The batched path is signal()'s, which looked the key up under the workflow lock in this
      // transaction (lockForDelivery): no row holds it, and a violation would fail the commit.
      uow.batch.insert(uow.batch.tables.signals, signal);
      return signal;
    }
    const manager = await uow.manager();
    if (fields.idempotencyKey === null) {
      await manager.insert(SignalEntity, row as PartialRow<SignalEntity>);
      return signal;
    }
    // The caller looked the key up under the workflow lock, so a conflict here is a redelivery
    // that lookup could not see. PostgreSQL and SQLite skip the row (ON CONFLICT DO NOTHING);
    // MariaDB/MySQL inserts in a savepoint and rolls back to it on the duplicate key (never
    // INSERT IGNORE, which also hides truncation and other errors).
    if (uow.lockingReads) {
      try {
        await manager.transaction((savepoint) =>
          savepoint.insert(SignalEntity, row as PartialRow<SignalEntity>),
        );
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
      }
    } else {
      await manager
        .createQueryBuilder()
        .insert()
        .into(SignalEntity)
        .values(row as PartialRow<SignalEntity>)
        .orIgnore()
        .updateEntity(false)
        .execute();
    }
    const stored = await this.findByKey(uow, fields.workflowId, fields.name, fields.idempotencyKey);
    if (!stored || stored.id === signal.id) return signal;
    stored.duplicateDelivery = true;
    return stored;
  }

  async update(
    uow: UnitOfWork,
    signal: SignalEntity,
    changes: Partial<SignalEntity>,
  ): Promise<void> {
    uow.signalsWritten();
    const updatedAt = new Date();
    if (uow.batch) {
      // Held back: a later read through the manager flushes it first; a claim of the signal this
      // transaction inserted joins that INSERT.
      uow.batch.update(uow.batch.tables.signals, { id: signal.id }, { ...changes, updatedAt });
      Object.assign(signal, changes, { updatedAt });
      return;
    }
    await (
      await uow.manager()
    ).update(SignalEntity, { id: signal.id }, {
      ...changes,
      updatedAt,
    } as PartialRow<SignalEntity>);
    Object.assign(signal, changes, { updatedAt });
  }
}
