/** What a dashboard request does; `view` covers every read. */
export type DashboardAction =
  'view' | 'pause' | 'resume' | 'resumeAt' | 'skip' | 'cancel' | 'signal';

/** What `authorize` is asked about. */
export interface DashboardAuthorizationContext {
  /** The platform request (Express or Fastify). */
  request: unknown;
  action: DashboardAction;
  /** The workflows the request reads or acts on; [] for list pages. */
  workflowIds: string[];
}

/** Options of `GenevaDriveDashboardModule.forRoot()` (SPEC §16.4). */
export interface GenevaDriveDashboardOptions {
  /** Where the dashboard is mounted, under the app's global prefix. Default `'geneva-drive'`. */
  path?: string;
  /**
   * Default false. Writes also need `authorize`: without it the dashboard is read-only whatever
   * this says, so a dashboard never ships writable by default.
   */
  readOnly?: boolean;
  /** Asked before every read (`view`) and write; false answers 403. Default: reads allowed, writes refused. */
  authorize?: (context: DashboardAuthorizationContext) => boolean | Promise<boolean>;
  /** Workflows per list page. Default 50. */
  pageSize?: number;
}

/** The options with their defaults applied. */
export interface ResolvedDashboardOptions {
  path: string;
  /** True unless `readOnly: false` and an `authorize` were both given. */
  readOnly: boolean;
  authorize: ((context: DashboardAuthorizationContext) => boolean | Promise<boolean>) | null;
  pageSize: number;
}
