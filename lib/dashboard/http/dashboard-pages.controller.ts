import {
  ForbiddenException,
  Get,
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
  BULK_ACTIONS,
  DashboardActions,
  WORKFLOW_ACTIONS,
  isBulkAction,
  isWorkflowAction,
  type BulkAction,
  type WorkflowAction,
} from '../dashboard.actions';
import { DashboardQueuesReader } from '../dashboard-queues.reader';
import { DashboardReader } from '../dashboard.reader';
import type { SafeHtml } from '../html';
import { bulkConfirmView, bulkResultView, confirmView } from '../views/confirm.view';
import { messagePage } from '../views/layout.view';
import { listView } from '../views/list.view';
import { queuesView } from '../views/queues.view';
import { workflowView } from '../views/workflow.view';
import { parseWorkflowFilter } from '../workflow-filter';
import { CSRF_FIELD, CSRF_REFUSED, csrfTokenFor, csrfTokenMatches } from './csrf-token';
import { refusalOf } from './dashboard-error-status';
import {
  bodyOf,
  requestPath,
  sendResponse,
  type DashboardRequest,
  type DashboardResponse,
} from './dashboard-request';

/** What a page handler answers: a page, or a redirect after a write. */
type PageResult = { status?: number; page: SafeHtml } | { redirect: string };

/** Ensures a route parameter names one of the offered actions. */
function workflowAction(value: string): WorkflowAction {
  if (!isWorkflowAction(value)) throw new NotFoundException(`No dashboard action ${value}.`);
  return value;
}

function bulkAction(value: string): BulkAction {
  if (!isBulkAction(value)) throw new NotFoundException(`No bulk action ${value}.`);
  return value;
}

/**
 * The HTML pages. Mounted at the configured path by `GenevaDriveDashboardModule` (a subclass
 * decorated with `@Controller(path)`), so the app's global prefix, guards, interceptors and
 * pipes apply. Every page sets the CSRF cookie its forms need; every POST checks it.
 */
// @Injectable() records the constructor's parameter types for the subclasses Nest mounts.
@Injectable()
export class DashboardPagesController {
  constructor(
    private readonly reader: DashboardReader,
    private readonly actions: DashboardActions,
    private readonly access: DashboardAccess,
    private readonly queues: DashboardQueuesReader,
  ) {}

  @Get()
  list(
    @Req() request: DashboardRequest,
    @Res() response: DashboardResponse,
    @Query() query: Record<string, unknown>,
  ): Promise<void> {
    return this.page(request, response, 0, async (base) => {
      await this.access.check(request, 'view', []);
      let problem: string | null = null;
      let filter = parseWorkflowFilter({});
      try {
        filter = parseWorkflowFilter(query);
      } catch (error) {
        problem = error instanceof Error ? error.message : String(error);
      }
      const page = await this.reader.list(
        filter.search,
        problem === null ? query.after : undefined,
      );
      return {
        status: problem === null ? 200 : 400,
        // Bulk actions are asked about with no ids here; the write asks again with the matches.
        page: listView(
          base,
          filter.fields,
          page,
          await this.access.permitted(request, BULK_ACTIONS, []),
          problem,
        ),
      };
    });
  }

  @Get('queues')
  queuesPage(@Req() request: DashboardRequest, @Res() response: DashboardResponse): Promise<void> {
    return this.page(request, response, 1, async (base) => {
      await this.access.check(request, 'view', []);
      return { page: queuesView(base, await this.queues.read()) };
    });
  }

  @Get('workflows/:id')
  workflow(
    @Req() request: DashboardRequest,
    @Res() response: DashboardResponse,
    @Param('id') id: string,
  ): Promise<void> {
    return this.page(request, response, 2, async (base) => {
      await this.access.check(request, 'view', [id]);
      const data = await this.reader.workflow(id);
      if (!data) throw new NotFoundException(`No workflow ${id}.`);
      const actions = await this.access.permitted(request, WORKFLOW_ACTIONS, [id]);
      return { page: workflowView(base, data, actions) };
    });
  }

  @Get('workflows/:id/:action')
  confirm(
    @Req() request: DashboardRequest,
    @Res() response: DashboardResponse,
    @Param('id') id: string,
    @Param('action') name: string,
  ): Promise<void> {
    return this.page(request, response, 3, async (base, csrf) => {
      const action = workflowAction(name);
      await this.access.check(request, action, [id]);
      const data = await this.reader.workflow(id);
      if (!data) throw new NotFoundException(`No workflow ${id}.`);
      return { page: confirmView(base, data.workflow, action, data.stepNames, csrf) };
    });
  }

  @Post('workflows/:id/:action')
  act(
    @Req() request: DashboardRequest,
    @Res() response: DashboardResponse,
    @Param('id') id: string,
    @Param('action') name: string,
  ): Promise<void> {
    return this.page(request, response, 3, async (base) => {
      const action = workflowAction(name);
      this.requireCsrf(request);
      await this.access.check(request, action, [id]);
      await this.actions.perform(id, action, bodyOf(request));
      return { redirect: `${base}/workflows/${encodeURIComponent(id)}` };
    });
  }

  @Get('bulk/:action')
  bulkDryRun(
    @Req() request: DashboardRequest,
    @Res() response: DashboardResponse,
    @Param('action') name: string,
    @Query() query: Record<string, unknown>,
  ): Promise<void> {
    return this.page(request, response, 2, async (base, csrf) => {
      const action = bulkAction(name);
      await this.access.check(request, action, []);
      const filter = parseWorkflowFilter(query);
      const matching = await this.reader.count(filter.search);
      return { page: bulkConfirmView(base, action, filter.fields, matching, csrf) };
    });
  }

  @Post('bulk/:action')
  bulkRun(
    @Req() request: DashboardRequest,
    @Res() response: DashboardResponse,
    @Param('action') name: string,
  ): Promise<void> {
    return this.page(request, response, 2, async (base) => {
      const action = bulkAction(name);
      this.requireCsrf(request);
      await this.access.check(request, action, []);
      const filter = parseWorkflowFilter(bodyOf(request));
      const result = await this.actions.bulk(request, action, filter.search);
      return { page: bulkResultView(base, action, result) };
    });
  }

  private requireCsrf(request: DashboardRequest): void {
    if (!csrfTokenMatches(request, bodyOf(request)[CSRF_FIELD])) {
      throw new ForbiddenException(CSRF_REFUSED);
    }
  }

  /**
   * Renders what `build` answers; a refusal (403, 404, 409, a bad filter) becomes an error page
   * with its status, anything else goes on to the app's exception filters. `depth` is how many
   * path segments the route adds to the mount point (the links are absolute from there).
   */
  private async page(
    request: DashboardRequest,
    response: DashboardResponse,
    depth: number,
    build: (base: string, csrfToken: string) => Promise<PageResult>,
  ): Promise<void> {
    const segments = requestPath(request).replace(/\/+$/, '').split('/');
    const base = segments.slice(0, segments.length - depth).join('/');
    const csrf = csrfTokenFor(request);
    const headers: Record<string, string> = {
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy':
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
    };
    if (csrf.setCookie) headers['Set-Cookie'] = csrf.setCookie;
    let result: PageResult;
    try {
      result = await build(base, csrf.token);
    } catch (error) {
      const refusal = refusalOf(error);
      if (refusal === null) throw error;
      const title =
        refusal.status === 403 ? 'Not allowed' : refusal.status === 404 ? 'Not found' : 'Refused';
      sendResponse(
        response,
        refusal.status,
        headers,
        messagePage(base, title, refusal.message, 'error').markup,
      );
      return;
    }
    if ('redirect' in result) {
      sendResponse(response, 303, { ...headers, Location: result.redirect }, '');
      return;
    }
    sendResponse(response, result.status ?? 200, headers, result.page.markup);
  }
}
