import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

export type OrderStatus = 'new' | 'reserved' | 'paid' | 'shipped' | 'void';

/** The hero of `OrderFulfillmentWorkflow`: the workflow loads it fresh before every step. */
@Entity('orders')
export class Order {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ name: 'customer_email', type: 'varchar' })
  customerEmail!: string;

  @Column({ name: 'amount_cents', type: 'integer' })
  amountCents!: number;

  @Column({ type: 'varchar', default: 'new' })
  status!: OrderStatus;

  @Column({ name: 'tracking_number', type: 'varchar', nullable: true })
  trackingNumber!: string | null;

  @CreateDateColumn({ name: 'created_at', type: Date })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: Date })
  updatedAt!: Date;
}
