import {
  Module,
  type DynamicModule,
  type InjectionToken,
  type ModuleMetadata,
  type OptionalFactoryDependency,
} from '@nestjs/common';
import { ModuleOptionsError } from '../errors/module-options.error';
import { DashboardAccess } from './dashboard-access';
import { dashboardControllers } from './dashboard-controllers.factory';
import type { GenevaDriveDashboardOptions } from './dashboard-options.interface';
import { DashboardActions } from './dashboard.actions';
import { DashboardQueuesReader } from './dashboard-queues.reader';
import { DashboardReader } from './dashboard.reader';
import {
  DASHBOARD_OPTIONS,
  dashboardPath,
  resolveDashboardOptions,
} from './resolve-dashboard-options';

/** `forRootAsync()` options; `path` is given here because routes exist before options resolve. */
export interface GenevaDriveDashboardAsyncOptions {
  imports?: ModuleMetadata['imports'];
  inject?: Array<InjectionToken | OptionalFactoryDependency>;
  /** Default `'geneva-drive'`; the factory's `path`, when it gives one, must be the same. */
  path?: string;
  /** Receives the `inject` values (typed `any[]`, as Nest's own factories are). */
  useFactory: (
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    ...args: any[]
  ) => GenevaDriveDashboardOptions | Promise<GenevaDriveDashboardOptions>;
}

const SERVICES = [DashboardAccess, DashboardReader, DashboardQueuesReader, DashboardActions];

/**
 * The operator dashboard (SPEC §16.4): server-rendered pages and a JSON API at `path`, built from
 * Nest controllers. Reads go through the library's repository port, writes through
 * `WorkflowService`. Writes need `readOnly: false` and an `authorize` function: a dashboard never
 * ships writable by default. `GenevaDriveModule` (or the testing module) must be imported.
 */
@Module({})
export class GenevaDriveDashboardModule {
  static forRoot(options: GenevaDriveDashboardOptions = {}): DynamicModule {
    const resolved = resolveDashboardOptions(options);
    return {
      module: GenevaDriveDashboardModule,
      controllers: dashboardControllers(resolved.path),
      providers: [{ provide: DASHBOARD_OPTIONS, useValue: resolved }, ...SERVICES],
    };
  }

  static forRootAsync(options: GenevaDriveDashboardAsyncOptions): DynamicModule {
    const path = dashboardPath(options.path);
    return {
      module: GenevaDriveDashboardModule,
      imports: options.imports ?? [],
      controllers: dashboardControllers(path),
      providers: [
        {
          provide: DASHBOARD_OPTIONS,
          inject: options.inject ?? [],
          useFactory: async (...args: unknown[]) => {
            const given = await options.useFactory(...args);
            if (given.path !== undefined && dashboardPath(given.path) !== path) {
              throw new ModuleOptionsError(
                `GenevaDriveDashboardModule.forRootAsync() useFactory returned path '${String(given.path)}', but the routes were mounted at '${path}' before it ran: give path in the forRootAsync() options instead.`,
              );
            }
            return resolveDashboardOptions({ ...given, path });
          },
        },
        ...SERVICES,
      ],
    };
  }
}
