import type {
  EntitySubscriberInterface,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';
import type { JobDispatcher } from '../../queue/job-dispatcher';

/**
 * Registered on the library's DataSource: releases the step jobs a caller's transaction produced
 * (`start(..., { manager })`) once that transaction commits, and drops them on rollback.
 */
export class AfterCommitSubscriber implements EntitySubscriberInterface {
  constructor(private readonly dispatcher: JobDispatcher) {}

  afterTransactionCommit(event: TransactionCommitEvent): void {
    this.dispatcher.onCallerCommit(event.queryRunner);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    this.dispatcher.onCallerRollback(event.queryRunner);
  }
}
