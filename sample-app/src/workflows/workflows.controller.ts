import { Controller, Get, HttpCode, NotFoundException, Param, Post, Query } from '@nestjs/common';
import { WorkflowService } from 'nestjs-geneva-drive';
import { ListWorkflowsQuery } from './list-workflows.query';
import { toSignalView, toTimeline } from './timeline';

/**
 * Inspect and steer any workflow. Library errors become HTTP statuses in
 * `GenevaDriveExceptionFilter` (unknown id → 404, verb not allowed in this state → 409, ...).
 */
@Controller('workflows')
export class WorkflowsController {
  constructor(private readonly workflows: WorkflowService) {}

  /** Newest first; `?state=paused`, `?workflow=OrderFulfillmentWorkflow`, `?limit=&offset=`. */
  @Get()
  list(@Query() query: ListWorkflowsQuery) {
    return this.workflows.list({
      state: query.state,
      workflow: query.workflow,
      limit: query.limit,
      offset: query.offset,
    });
  }

  /** The workflow, its timeline (every step execution) and its signals, oldest first. */
  @Get(':id')
  async show(@Param('id') id: string) {
    const workflow = await this.workflows.find(id);
    if (!workflow) throw new NotFoundException(`No workflow with id '${id}'.`);
    const [history, signals] = await Promise.all([
      this.workflows.executionHistory(workflow),
      this.workflows.signals(workflow),
    ]);
    return { workflow, timeline: toTimeline(history), signals: signals.map(toSignalView) };
  }

  /** A ready workflow pauses now; a performing one after its running step. */
  @Post(':id/pause')
  @HttpCode(200)
  pause(@Param('id') id: string) {
    return this.workflows.pause(id);
  }

  @Post(':id/resume')
  @HttpCode(200)
  resume(@Param('id') id: string) {
    return this.workflows.resume(id);
  }

  /** Skips the current (or paused-at) step and schedules the next one. */
  @Post(':id/skip')
  @HttpCode(200)
  skip(@Param('id') id: string) {
    return this.workflows.skip(id);
  }

  @Post(':id/cancel')
  @HttpCode(200)
  cancel(@Param('id') id: string) {
    return this.workflows.cancel(id);
  }
}
