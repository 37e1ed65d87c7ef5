import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

export type CampaignStatus = 'sending' | 'sent';

/** The hero of `CampaignWorkflow`: one email to each of its subscribers. */
@Entity('campaigns')
export class Campaign {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar' })
  name!: string;

  /** How many subscribers were seeded with the campaign. */
  @Column({ name: 'subscriber_count', type: 'integer' })
  subscriberCount!: number;

  @Column({ type: 'varchar', default: 'sending' })
  status!: CampaignStatus;

  /** Set by the workflow's `report` step. */
  @Column({ name: 'delivered_count', type: 'integer', nullable: true })
  deliveredCount!: number | null;

  @Column({ name: 'reported_at', type: Date, nullable: true })
  reportedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: Date })
  createdAt!: Date;
}
