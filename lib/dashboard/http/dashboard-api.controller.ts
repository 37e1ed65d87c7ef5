import {
  Body,
  ForbiddenException,
  Get,
  HttpCode,
  Injectable,
  NotFoundException,
  Param,
  Post,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import { DashboardAccess } from '../dashboard-access';
import {
  DashboardActions,
  isBulkAction,
  isWorkflowAction,
  type ActionInput,
  type BulkResult,
} from '../dashboard.actions';
import { DashboardQueuesReader } from '../dashboard-queues.reader';
import { DashboardReader } from '../dashboard.reader';
import type {
  QueuesOverview,
  WorkflowListPage,
  WorkflowTimeline,
} from '../dashboard-timeline.interface';
import { parseWorkflowFilter } from '../workflow-filter';
import {
  CSRF_FIELD,
  CSRF_HEADER,
  CSRF_REFUSED,
  csrfTokenFor,
  csrfTokenMatches,
} from './csrf-token';
import { asHttpException } from './dashboard-error-status';
import { bodyOf, type DashboardRequest, type DashboardResponse } from './dashboard-request';

/**
 * The JSON API under `<path>/api`: the pages' data, and the same writes under the same rules
 * (the CSRF token from `GET api/csrf` in the `x-csrf-token` header or a `_csrf` field).
 */
// @Injectable() records the constructor's parameter types for the subclasses Nest mounts.
@Injectable()
export class DashboardApiController {
  constructor(
    private readonly reader: DashboardReader,
    private readonly actions: DashboardActions,
    private readonly access: DashboardAccess,
    private readonly queues: DashboardQueuesReader,
  ) {}

  /** The CSRF token (set as its cookie too) for the writes. */
  @Get('csrf')
  csrf(
    @Req() request: DashboardRequest,
    @Res({ passthrough: true }) response: DashboardResponse,
  ): { token: string } {
    const { token, setCookie } = csrfTokenFor(request);
    if (setCookie) {
      if (response.setHeader) response.setHeader('Set-Cookie', setCookie);
      else response.header?.('Set-Cookie', setCookie);
    }
    return { token };
  }

  @Get('queues')
  queuesOverview(@Req() request: DashboardRequest): Promise<QueuesOverview> {
    return this.guard(async () => {
      await this.access.check(request, 'view', []);
      return this.queues.read();
    });
  }

  @Get('workflows')
  list(
    @Req() request: DashboardRequest,
    @Query() query: Record<string, unknown>,
  ): Promise<WorkflowListPage> {
    return this.guard(async () => {
      await this.access.check(request, 'view', []);
      return this.reader.list(parseWorkflowFilter(query).search, query.after);
    });
  }

  @Get('workflows/:id')
  workflow(@Req() request: DashboardRequest, @Param('id') id: string): Promise<WorkflowTimeline> {
    return this.guard(async () => {
      await this.access.check(request, 'view', [id]);
      const data = await this.reader.workflow(id);
      if (!data) throw new NotFoundException(`No workflow ${id}.`);
      return data;
    });
  }

  @Post('workflows/:id/:action')
  @HttpCode(200)
  act(
    @Req() request: DashboardRequest,
    @Param('id') id: string,
    @Param('action') action: string,
    @Body() body: ActionInput,
  ): Promise<WorkflowTimeline> {
    return this.guard(async () => {
      if (!isWorkflowAction(action)) throw new NotFoundException(`No dashboard action ${action}.`);
      this.requireCsrf(request);
      await this.access.check(request, action, [id]);
      await this.actions.perform(id, action, body ?? {});
      const data = await this.reader.workflow(id);
      if (!data) throw new NotFoundException(`No workflow ${id}.`);
      return data;
    });
  }

  /** The dry run: how many workflows a bulk action over this filter would touch. */
  @Get('bulk/:action')
  bulkDryRun(
    @Req() request: DashboardRequest,
    @Param('action') action: string,
    @Query() query: Record<string, unknown>,
  ): Promise<{ matching: number }> {
    return this.guard(async () => {
      if (!isBulkAction(action)) throw new NotFoundException(`No bulk action ${action}.`);
      await this.access.check(request, action, []);
      return { matching: await this.reader.count(parseWorkflowFilter(query).search) };
    });
  }

  @Post('bulk/:action')
  @HttpCode(200)
  bulk(@Req() request: DashboardRequest, @Param('action') action: string): Promise<BulkResult> {
    return this.guard(async () => {
      if (!isBulkAction(action)) throw new NotFoundException(`No bulk action ${action}.`);
      this.requireCsrf(request);
      await this.access.check(request, action, []);
      return this.actions.bulk(request, action, parseWorkflowFilter(bodyOf(request)).search);
    });
  }

  private requireCsrf(request: DashboardRequest): void {
    const header = request.headers[CSRF_HEADER];
    const submitted = typeof header === 'string' ? header : bodyOf(request)[CSRF_FIELD];
    if (!csrfTokenMatches(request, submitted)) throw new ForbiddenException(CSRF_REFUSED);
  }

  /** Library errors as HTTP errors (404, 409, 400, 413), so the app's filters see HttpExceptions. */
  private async guard<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw asHttpException(error);
    }
  }
}
