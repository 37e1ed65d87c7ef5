import { Inject } from '@nestjs/common';
import { describeValue } from '../common/input-guards';
import { ModuleOptionsError } from '../errors/module-options.error';
import type {
  GenevaDriveDashboardOptions,
  ResolvedDashboardOptions,
} from './dashboard-options.interface';

/** The token of the dashboard's resolved options. */
export const DASHBOARD_OPTIONS = Symbol('geneva-drive:dashboard-options');

export const InjectDashboardOptions = (): ParameterDecorator => Inject(DASHBOARD_OPTIONS);

const KEYS = new Set(['path', 'readOnly', 'authorize', 'pageSize']);
const PATH_PATTERN = /^[A-Za-z0-9._~-]+(?:\/[A-Za-z0-9._~-]+)*$/;

/** The mount path without surrounding slashes; refuses one that is not plain URL segments. */
export function dashboardPath(path: unknown = 'geneva-drive'): string {
  const trimmed = typeof path === 'string' ? path.replace(/^\/+|\/+$/g, '') : path;
  if (typeof trimmed !== 'string' || !PATH_PATTERN.test(trimmed)) {
    throw new ModuleOptionsError(
      `GenevaDriveDashboardModule path must be URL path segments such as 'geneva-drive' or 'admin/workflows', but was ${describeValue(path)}.`,
    );
  }
  return trimmed;
}

/** Applies the defaults and refuses what cannot work, naming the option and the fix. */
export function resolveDashboardOptions(
  options: GenevaDriveDashboardOptions = {},
): ResolvedDashboardOptions {
  const unknown = Object.keys(options).filter((key) => !KEYS.has(key));
  if (unknown.length > 0) {
    throw new ModuleOptionsError(
      `GenevaDriveDashboardModule does not know the option(s) ${unknown.join(', ')}: use path, readOnly, authorize, pageSize.`,
    );
  }
  const { readOnly = false, authorize, pageSize = 50 } = options;
  if (typeof readOnly !== 'boolean') {
    throw new ModuleOptionsError(
      `GenevaDriveDashboardModule readOnly must be true or false, but was ${describeValue(readOnly)}.`,
    );
  }
  if (authorize !== undefined && typeof authorize !== 'function') {
    throw new ModuleOptionsError(
      `GenevaDriveDashboardModule authorize must be a function ({ request, action, workflowIds }) => boolean | Promise<boolean>, but was ${describeValue(authorize)}.`,
    );
  }
  if (!Number.isSafeInteger(pageSize) || pageSize < 1 || pageSize > 1000) {
    throw new ModuleOptionsError(
      `GenevaDriveDashboardModule pageSize must be a whole number from 1 to 1000, but was ${describeValue(pageSize)}.`,
    );
  }
  return {
    path: dashboardPath(options.path),
    readOnly: readOnly || authorize === undefined,
    authorize: authorize ?? null,
    pageSize,
  };
}
