import { Body, Controller, Post } from '@nestjs/common';
import { WorkflowService } from 'nestjs-geneva-drive';
import { DataSource } from 'typeorm';
import { CreateThingDto } from './create-thing.dto';
import { Thing } from './thing.entity';
import { ThingWorkflow } from './thing.workflow';

@Controller('things')
export class ThingsController {
  constructor(
    private readonly workflows: WorkflowService,
    private readonly dataSource: DataSource,
  ) {}

  @Post()
  create(@Body() body: CreateThingDto): Promise<{ thingId: number; workflowId: string }> {
    return this.dataSource.transaction(async (manager) => {
      const thing = await manager.save(Thing, manager.create(Thing, { name: body.name }));
      // enqueued only if and after this transaction commits
      const workflow = await this.workflows.start(ThingWorkflow, { hero: thing, manager });
      return { thingId: thing.id, workflowId: workflow.id };
    });
  }
}
