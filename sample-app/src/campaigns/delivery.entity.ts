import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One campaign email handed to the mailer. The primary key is the subscriber: `sendEmails` looks
 * the row up and inserts it before it sends, so a subscriber processed twice (the step died after
 * its delivery committed and before its cursor checkpoint) is emailed once.
 */
@Entity('campaign_deliveries')
@Index(['campaignId'])
export class Delivery {
  @PrimaryColumn({ name: 'subscriber_id', type: 'integer' })
  subscriberId!: number;

  @Column({ name: 'campaign_id', type: 'integer' })
  campaignId!: number;

  @Column({ name: 'sent_at', type: Date })
  sentAt!: Date;
}
