import { ModuleOptionsError } from '../errors/module-options.error';
import type { GenevaDriveModuleOptions } from '../interfaces/module-options.interface';
import { resolveModuleOptions } from '../options/resolve-module-options';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import type {
  GenevaDriveTestingModuleOptions,
  ResolvedTestingOptions,
} from './testing-module-options.interface';

const SOURCE = 'GenevaDriveTestingModule.forRoot()';

/** Root options that make no sense without BullMQ; the testing module refuses them. */
const PRODUCTION_ONLY_KEYS = [
  'connection',
  'prefix',
  'queues',
  'worker',
  'maxChainedSteps',
  'transport',
] as const;

/**
 * Validates testing-module options the way the root module validates its own (unknown keys
 * rejected, every offending key named in one `ModuleOptionsError`) and applies the testing
 * defaults: `enqueueAfterCommit: false`, housekeeping timers off, no workers.
 */
export function resolveTestingOptions(options: GenevaDriveTestingModuleOptions | undefined): {
  resolved: ResolvedGenevaDriveOptions;
  testing: ResolvedTestingOptions;
} {
  const raw: unknown = options ?? {};
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new ModuleOptionsError(`${SOURCE} expects an options object.`);
  }
  const { autoRun, ...rest } = raw as GenevaDriveTestingModuleOptions & Record<string, unknown>;
  const problems: string[] = [];
  for (const key of PRODUCTION_ONLY_KEYS) {
    if (key in rest) {
      problems.push(
        `${key} is not a testing-module option (the in-process queue needs no Redis and runs no BullMQ workers)`,
      );
      delete rest[key];
    }
  }
  if (autoRun !== undefined && typeof autoRun !== 'boolean') {
    problems.push('autoRun: autoRun must be a boolean');
  }
  let resolved: ResolvedGenevaDriveOptions | null = null;
  let rootProblems = '';
  try {
    resolved = resolveModuleOptions(rest, SOURCE);
  } catch (error) {
    if (!(error instanceof ModuleOptionsError)) throw error;
    rootProblems = error.message;
  }
  if (problems.length > 0) {
    throw new ModuleOptionsError(
      `${SOURCE} has invalid options: ${problems.join('; ')}.${rootProblems ? ` ${rootProblems}` : ''}`,
    );
  }
  if (!resolved) throw new ModuleOptionsError(rootProblems);
  return {
    resolved: {
      ...resolved,
      queues: {},
      worker: false,
      enqueueAfterCommit: (rest as GenevaDriveModuleOptions).enqueueAfterCommit ?? false,
      // `HousekeepingService.run()` keeps working; only the cron schedule is never registered.
      housekeeping: { ...resolved.housekeeping, enabled: false },
    },
    testing: { autoRun: autoRun ?? false },
  };
}
