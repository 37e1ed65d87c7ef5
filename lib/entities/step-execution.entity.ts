import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { StepExecutionOutcome, StepExecutionState } from '../interfaces/states.interface';
import { cursorTransformer } from './json-column.transformer';

/** One attempt at one step (table `geneva_drive_step_executions`). */
@Entity('geneva_drive_step_executions', { synchronize: false })
export class StepExecutionEntity {
  /** UUIDv7; also the base of the BullMQ job id. */
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'workflow_id', type: 'varchar', length: 36 })
  workflowId!: string;

  @Column({ name: 'step_name', type: 'varchar' })
  stepName!: string;

  @Column({ type: 'varchar', default: 'scheduled' })
  state!: StepExecutionState;

  @Column({ type: 'varchar', nullable: true })
  outcome!: StepExecutionOutcome | null;

  /** The earliest time the step may run. */
  @Column({ name: 'scheduled_for' })
  scheduledFor!: Date;

  // `type: Date` is required: a `Date | null` property reflects as `Object`, which TypeORM rejects.
  @Column({ name: 'started_at', type: Date, nullable: true })
  startedAt!: Date | null;

  @Column({ name: 'completed_at', type: Date, nullable: true })
  completedAt!: Date | null;

  @Column({ name: 'failed_at', type: Date, nullable: true })
  failedAt!: Date | null;

  @Column({ name: 'canceled_at', type: Date, nullable: true })
  canceledAt!: Date | null;

  @Column({ name: 'skipped_at', type: Date, nullable: true })
  skippedAt!: Date | null;

  /** Set by every terminal transition. */
  @Column({ name: 'finished_at', type: Date, nullable: true })
  finishedAt!: Date | null;

  @Column({ name: 'error_class_name', type: 'varchar', nullable: true })
  errorClassName!: string | null;

  @Column({ name: 'error_message', type: 'text', nullable: true })
  errorMessage!: string | null;

  @Column({ name: 'error_backtrace', type: 'text', nullable: true })
  errorBacktrace!: string | null;

  /** The latest BullMQ job id used for this execution. */
  @Column({ name: 'job_id', type: 'varchar', nullable: true })
  jobId!: string | null;

  /**
   * Bookkeeping JSON: `reattemptReason` (`'flow_control' | 'exception_policy' | 'precondition'`),
   * `exception` (`{ class, message, backtrace }`), `user` (what `ctx.metadata.set()` stored),
   * `attempt` (the attempt number of a reattempted step, from 2; absent on a first attempt).
   */
  @Column({ type: 'json', nullable: true })
  metadata!: Record<string, unknown> | null;

  /** JSON cursor of a resumable step (null before the first checkpoint). */
  @Column({ type: 'json', nullable: true, transformer: cursorTransformer })
  cursor!: unknown;

  /** The predecessor execution in a resumable chain. */
  @Column({ name: 'continues_from_id', type: 'varchar', length: 36, nullable: true })
  continuesFromId!: string | null;

  /** The signal this execution is processing (the attachment pin). */
  @Column({ name: 'signal_id', type: 'varchar', length: 36, nullable: true })
  signalId!: string | null;

  /** When the execution parked waiting for a signal. */
  @Column({ name: 'waiting_since', type: Date, nullable: true })
  waitingSince!: Date | null;

  /** When a parked execution's `timeout` passes (`waiting_since` + timeout); null when unbounded. */
  @Column({ name: 'wait_deadline_at', type: Date, nullable: true })
  waitDeadlineAt!: Date | null;

  @Column({ name: 'created_at' })
  createdAt!: Date;

  @Column({ name: 'updated_at' })
  updatedAt!: Date;
}
