import { Module } from '@nestjs/common';
import { WorkflowsController } from './workflows.controller';

/** `WorkflowService` comes from the global `GenevaDriveModule`; nothing to import. */
@Module({ controllers: [WorkflowsController] })
export class WorkflowsModule {}
