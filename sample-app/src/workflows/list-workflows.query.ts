import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Max, Min } from 'class-validator';
import type { WorkflowState } from 'nestjs-geneva-drive';

const WORKFLOW_STATES: readonly WorkflowState[] = [
  'ready',
  'performing',
  'paused',
  'finished',
  'canceled',
];

/** Query of `GET /workflows`. */
export class ListWorkflowsQuery {
  /** Only workflows in this state. */
  @IsOptional()
  @IsIn(WORKFLOW_STATES)
  state?: WorkflowState;

  /** Only workflows of this registered name, e.g. `OrderFulfillmentWorkflow`. */
  @IsOptional()
  @IsString()
  workflow?: string;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(200)
  limit: number = 50;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(0)
  offset?: number;
}
