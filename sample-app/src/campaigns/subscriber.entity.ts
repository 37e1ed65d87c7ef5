import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { Campaign } from './campaign.entity';

/**
 * A campaign's recipient. `CampaignWorkflow.sendEmails` walks a campaign's subscribers by id
 * (keyset pagination: `campaign_id = ? AND id > cursor ORDER BY id`), which the index serves.
 */
@Entity('subscribers')
@Index(['campaignId', 'id'])
export class Subscriber {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ name: 'campaign_id', type: 'integer' })
  campaignId!: number;

  @ManyToOne(() => Campaign, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'campaign_id' })
  campaign?: Campaign;

  @Column({ type: 'varchar' })
  email!: string;
}
