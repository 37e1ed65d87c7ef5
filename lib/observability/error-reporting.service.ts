import { Injectable, Logger } from '@nestjs/common';
import type { ErrorReportContext } from '../interfaces/module-options.interface';
import { InjectResolvedOptions } from '../options/resolved-options.token';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';

/** Sends errors to the configured `errorReporter`, or logs them; never throws itself. */
@Injectable()
export class ErrorReportingService {
  private readonly logger = new Logger('GenevaDrive');

  constructor(@InjectResolvedOptions() private readonly options: ResolvedGenevaDriveOptions) {}

  async report(error: Error, context: ErrorReportContext): Promise<void> {
    try {
      if (this.options.errorReporter) {
        await this.options.errorReporter(error, context);
        return;
      }
      (this.options.logger ?? this.logger).error(
        `${error.name}: ${error.message} ${JSON.stringify(context)}`,
        error.stack,
      );
    } catch (reporterError) {
      this.logger.error(
        `errorReporter threw while reporting ${error.name}: ${String(reporterError)}`,
      );
    }
  }
}
