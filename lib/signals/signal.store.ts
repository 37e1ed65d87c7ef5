import { Injectable } from '@nestjs/common';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { v7 as uuidv7 } from 'uuid';
import { SignalEntity } from '../entities/signal.entity';
import { StepExecutionEntity } from '../entities/step-execution.entity';
import type { UnitOfWork } from '../persistence/unit-of-work';

/**
 * Reads and writes of signal rows. Every caller holds the workflow row lock, so reads that decide
 * a transition see every committed signal of the workflow (and are locking reads where needed).
 */
@Injectable()
export class SignalStore {
  findByKey(uow: UnitOfWork, workflowId: string, name: string, idempotencyKey: string): Promise<SignalEntity | null> {
    return uow.manager.findOne(SignalEntity, { where: { workflowId, name, idempotencyKey } });
  }

  findById(uow: UnitOfWork, id: string): Promise<SignalEntity | null> {
    return uow.manager.findOne(SignalEntity, { where: { id } });
  }

  /** Signals not yet consumed, oldest first (FIFO). */
  attachable(uow: UnitOfWork, workflowId: string): Promise<SignalEntity[]> {
    return uow.manager
      .createQueryBuilder(SignalEntity, 'signal')
      .where('signal.workflowId = :workflowId', { workflowId })
      .andWhere("signal.state <> 'consumed'")
      .orderBy('signal.createdAt', 'ASC')
      .addOrderBy('signal.id', 'ASC')
      .getMany();
  }

  /** Executions parked waiting for a signal, oldest first. */
  waitingExecutions(uow: UnitOfWork, workflowId: string): Promise<StepExecutionEntity[]> {
    return uow.manager.find(StepExecutionEntity, {
      where: { workflowId, state: 'waiting' },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  /** Every execution ever attached to the signal. */
  attachedExecutions(uow: UnitOfWork, signalId: string): Promise<StepExecutionEntity[]> {
    return uow.manager.find(StepExecutionEntity, {
      where: { signalId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  async insert(
    uow: UnitOfWork,
    fields: Pick<SignalEntity, 'workflowId' | 'name' | 'idempotencyKey' | 'payload'>,
  ): Promise<SignalEntity> {
    const now = new Date();
    const signal = Object.assign(new SignalEntity(), {
      id: uuidv7(),
      state: 'pending',
      claimedAt: null,
      consumedAt: null,
      claimed: 0,
      consumed: 0,
      createdAt: now,
      updatedAt: now,
      ...fields,
    } satisfies Partial<SignalEntity>);
    const { duplicateDelivery: _notAColumn, ...row } = signal;
    await uow.manager.insert(SignalEntity, row as QueryDeepPartialEntity<SignalEntity>);
    return signal;
  }

  async update(uow: UnitOfWork, signal: SignalEntity, changes: Partial<SignalEntity>): Promise<void> {
    const updatedAt = new Date();
    await uow.manager.update(SignalEntity, { id: signal.id }, {
      ...changes,
      updatedAt,
    } as QueryDeepPartialEntity<SignalEntity>);
    Object.assign(signal, changes, { updatedAt });
  }
}
