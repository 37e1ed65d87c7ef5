import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** The hero of `ThingWorkflow`: each step appends its name to `trail`. */
@Entity('consumer_things')
export class Thing {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'varchar', length: 200, default: '' })
  trail: string;
}
