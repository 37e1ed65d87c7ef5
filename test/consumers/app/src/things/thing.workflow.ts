import { InjectRepository } from '@nestjs/typeorm';
import { Step, Workflow, type StepContext } from 'nestjs-geneva-drive';
import { Repository } from 'typeorm';
import { Thing } from './thing.entity';

@Workflow({ hero: () => Thing })
export class ThingWorkflow {
  constructor(@InjectRepository(Thing) private readonly things: Repository<Thing>) {}

  @Step()
  async inspect(ctx: StepContext<Thing>): Promise<void> {
    await this.record(ctx.hero, 'inspect');
  }

  @Step()
  async paint(ctx: StepContext<Thing>): Promise<void> {
    await this.record(ctx.hero, 'paint');
  }

  @Step()
  async ship(ctx: StepContext<Thing>): Promise<void> {
    await this.record(ctx.hero, 'ship');
  }

  private async record(thing: Thing, step: string): Promise<void> {
    const trail = thing.trail ? `${thing.trail},${step}` : step;
    await this.things.update(thing.id, { trail });
  }
}
