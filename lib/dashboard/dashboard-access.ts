import { ForbiddenException, Injectable } from '@nestjs/common';
import type { DashboardAction, ResolvedDashboardOptions } from './dashboard-options.interface';
import { InjectDashboardOptions } from './resolve-dashboard-options';

/**
 * Who may do what: reads need `authorize` to allow `view` (when one is given); writes need the
 * dashboard to be writable (`readOnly: false` and an `authorize`) and `authorize` to allow them.
 */
@Injectable()
export class DashboardAccess {
  constructor(@InjectDashboardOptions() private readonly options: ResolvedDashboardOptions) {}

  /**
   * Of `actions`, those `authorize` allows on `workflowIds` (none on a read-only dashboard): a page
   * offers only these, so a user who may only view sees no action that would answer 403.
   */
  async permitted<A extends DashboardAction>(
    request: unknown,
    actions: readonly A[],
    workflowIds: string[],
  ): Promise<A[]> {
    const authorize = this.options.authorize;
    if (this.options.readOnly || !authorize) return [];
    const answers = await Promise.all(
      actions.map(async (action) => (await authorize({ request, action, workflowIds })) === true),
    );
    return actions.filter((_, index) => answers[index]);
  }

  /** Resolves when allowed; a ForbiddenException (403) says why not. */
  async check(request: unknown, action: DashboardAction, workflowIds: string[]): Promise<void> {
    if (action !== 'view' && this.options.readOnly) {
      throw new ForbiddenException(
        'This dashboard is read-only: writes need readOnly: false and an authorize function in GenevaDriveDashboardModule.forRoot().',
      );
    }
    const authorize = this.options.authorize;
    if (authorize && (await authorize({ request, action, workflowIds })) !== true) {
      throw new ForbiddenException(`Not allowed to ${action} here.`);
    }
  }
}
