import { Injectable } from '@nestjs/common';
import { v7 as uuidv7 } from 'uuid';
import { SignalEntity } from '../../entities/signal.entity';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import { isUniqueViolation, lockingRead } from './sql-dialect';
import { ExecutionColumns } from './execution-columns';
import type { UnitOfWork } from './unit-of-work';
import { newSignalRow } from '../../entities/new-rows';
import type { PartialRow } from './partial-row';

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

  async findById(uow: UnitOfWork, id: string): Promise<SignalEntity | null> {
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
    const now = new Date();
    const signal = newSignalRow(uuidv7(), fields, now);
    const { duplicateDelivery: _notAColumn, ...row } = signal;
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
    const updatedAt = new Date();
    await (
      await uow.manager()
    ).update(SignalEntity, { id: signal.id }, {
      ...changes,
      updatedAt,
    } as PartialRow<SignalEntity>);
    Object.assign(signal, changes, { updatedAt });
  }
}
