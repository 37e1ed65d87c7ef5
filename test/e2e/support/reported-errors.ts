import type { ErrorReportContext } from '../../../lib';

/** One call of the app's `errorReporter`. */
export interface ErrorReport {
  error: Error;
  context: ErrorReportContext;
}

/**
 * What an app's `errorReporter` heard (`reporter` goes into the module options), and a way to wait
 * for it: the runner reports after the failure's transaction committed, so a test that saw the
 * workflow's final state may still be ahead of the report.
 */
export class ReportedErrors {
  readonly reports: ErrorReport[] = [];
  private readonly listeners = new Set<() => void>();

  readonly reporter = (error: Error, context: ErrorReportContext): void => {
    this.reports.push({ error, context });
    for (const listener of [...this.listeners]) listener();
  };

  /** The reports of one workflow so far. */
  of(workflowId: string): ErrorReport[] {
    return this.reports.filter((report) => report.context.workflowId === workflowId);
  }

  /** Resolves the reports matching `match` once there are at least `count` of them. */
  waitFor(match: (report: ErrorReport) => boolean, count = 1): Promise<ErrorReport[]> {
    return new Promise((resolve) => {
      const check = () => {
        const matching = this.reports.filter(match);
        if (matching.length < count) return;
        this.listeners.delete(check);
        resolve(matching);
      };
      this.listeners.add(check);
      check();
    });
  }
}
