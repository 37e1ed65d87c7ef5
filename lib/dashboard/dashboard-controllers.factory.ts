import { Controller, type Type } from '@nestjs/common';
import { DashboardApiController } from './http/dashboard-api.controller';
import { DashboardPagesController } from './http/dashboard-pages.controller';

/**
 * The controllers mounted at `path`: fresh subclasses decorated here, so two dashboards at two
 * paths (or two test apps) never share route metadata.
 */
export function dashboardControllers(path: string): Array<Type<unknown>> {
  @Controller(path)
  class GenevaDriveDashboardPagesController extends DashboardPagesController {}

  @Controller(`${path}/api`)
  class GenevaDriveDashboardApiController extends DashboardApiController {}

  return [GenevaDriveDashboardPagesController, GenevaDriveDashboardApiController];
}
