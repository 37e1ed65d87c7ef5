import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { GenevaDriveHealthProbe } from '../health/geneva-drive-health.probe';
import type { HealthThresholds } from '../health/health-findings.interface';

/** The limits `isHealthy()` holds the backlog to; each check runs only when its limit is given. */
export type GenevaDriveHealthOptions = HealthThresholds;

/**
 * A `@nestjs/terminus` health indicator for readiness: the database answers, the transport
 * (Redis) answers on the library's own connection and reports its workers per queue, and the
 * backlog is within the given limits. Down when any of these fails, with the findings as details.
 * List it in the providers of the module that has your health controller, beside
 * `TerminusModule`; `GenevaDriveModule` (or the testing module) must be imported in the app.
 */
@Injectable()
export class GenevaDriveHealthIndicator {
  constructor(
    private readonly health: HealthIndicatorService,
    private readonly probe: GenevaDriveHealthProbe,
  ) {}

  async isHealthy(
    key = 'geneva-drive',
    options: GenevaDriveHealthOptions = {},
  ): Promise<HealthIndicatorResult> {
    const { healthy, ...details } = await this.probe.read(options);
    const session = this.health.check(key);
    return healthy ? session.up(details) : session.down(details);
  }
}
