import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { SignalState } from '../interfaces/states.interface';

/** An external event delivered to a workflow (table `geneva_drive_signals`). */
@Entity('geneva_drive_signals', { synchronize: false })
export class SignalEntity {
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id!: string;

  @Column({ name: 'workflow_id', type: 'varchar', length: 36 })
  workflowId!: string;

  @Column({ type: 'varchar' })
  name!: string;

  @Column({ name: 'idempotency_key', type: 'varchar', nullable: true })
  idempotencyKey!: string | null;

  @Column({ type: 'varchar', default: 'pending' })
  state!: SignalState;

  /** JSON; keys come back exactly as sent. `null` when no payload was given. */
  @Column({ type: 'json', nullable: true })
  payload!: unknown;

  // `type: Date` is required: a `Date | null` property reflects as `Object`, which TypeORM rejects.
  @Column({ name: 'claimed_at', type: Date, nullable: true })
  claimedAt!: Date | null;

  @Column({ name: 'consumed_at', type: Date, nullable: true })
  consumedAt!: Date | null;

  /** Counter of attachments. */
  @Column({ type: 'integer', default: 0 })
  claimed!: number;

  /** Counter of clean resolutions. */
  @Column({ type: 'integer', default: 0 })
  consumed!: number;

  @Column({ name: 'created_at' })
  createdAt!: Date;

  @Column({ name: 'updated_at' })
  updatedAt!: Date;

  /** Not a column: true when `signal()` returned an existing row for a known idempotency key. */
  duplicateDelivery = false;
}
