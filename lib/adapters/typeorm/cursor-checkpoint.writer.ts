import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { cursorTransformer } from '../../entities/json-column.transformer';
import { StepExecutionEntity } from '../../entities/step-execution.entity';
import { WorkflowEntity } from '../../entities/workflow.entity';
import type { WorkflowState } from '../../interfaces/states.interface';
import { GenevaDriveDataSource } from './geneva-drive-data-source';
import { quoteTable } from '../sql-identifiers';
import { retryTransientDatabaseErrors } from '../../common/transient-database-error';

/** Waits before writing a checkpoint again after a lost connection (about 4 s in all: a failover). */
const CHECKPOINT_RETRY_DELAYS_MS = [100, 400, 1_000, 2_500] as const;

/**
 * A resumable step's checkpoint: the cursor written outside any transaction, and the workflow's
 * state read for the pause/cancel check. On PostgreSQL both happen in one statement
 * (`UPDATE … FROM … RETURNING`); elsewhere the state is read separately.
 */
@Injectable()
export class CursorCheckpointWriter {
  constructor(private readonly database: GenevaDriveDataSource) {}

  /** Writes the cursor; resolves the workflow's state when the same statement could read it. */
  write(execution: StepExecutionEntity, cursor: unknown): Promise<WorkflowState | null> {
    // A lost connection is retried: it is no fault of the step (the write is idempotent).
    return retryTransientDatabaseErrors(
      // Through database.write: on SQLite it waits for the mutex instead of landing in another transaction.
      () =>
        this.database.write(async (manager) => {
          if (this.database.family === 'postgres')
            return this.writeReturningState(manager, execution, cursor);
          await manager.update(
            StepExecutionEntity,
            { id: execution.id },
            { cursor: cursor as object, updatedAt: new Date() },
          );
          return null;
        }),
      CHECKPOINT_RETRY_DELAYS_MS,
    );
  }

  /** The workflow's state, read on its own. */
  async workflowState(workflowId: string): Promise<WorkflowState | null> {
    const row = await retryTransientDatabaseErrors(
      () =>
        this.database.manager.findOne(WorkflowEntity, {
          where: { id: workflowId },
          select: { id: true, state: true },
        }),
      CHECKPOINT_RETRY_DELAYS_MS,
    );
    return row?.state ?? null;
  }

  private async writeReturningState(
    manager: EntityManager,
    execution: StepExecutionEntity,
    cursor: unknown,
  ): Promise<WorkflowState | null> {
    const executions = this.tableOf(manager, StepExecutionEntity);
    const workflows = this.tableOf(manager, WorkflowEntity);
    const stored = cursorTransformer.to(cursor) as unknown;
    // TypeORM hands back [rows, affected count] for an UPDATE on PostgreSQL.
    const [rows] = await manager.query<[Array<{ state: WorkflowState }>, number]>(
      `UPDATE ${executions} AS execution SET "cursor" = $1::json, "updated_at" = $2 FROM ${workflows} AS workflow ` +
        'WHERE execution."id" = $3 AND workflow."id" = execution."workflow_id" RETURNING workflow."state"',
      [
        stored === null || stored === undefined ? null : JSON.stringify(stored),
        new Date(),
        execution.id,
      ],
    );
    return rows[0]?.state ?? null;
  }

  private tableOf(
    manager: EntityManager,
    entity: typeof StepExecutionEntity | typeof WorkflowEntity,
  ): string {
    return quoteTable(manager.connection.getMetadata(entity));
  }
}
