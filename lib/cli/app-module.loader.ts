import type { DynamicModule, Type } from '@nestjs/common';
import { existsSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import { ModuleOptionsError } from '../errors/module-options.error';
import type { AppReference } from './app-reference';
import { CliUsageError } from './cli-usage.error';

/** What `geneva-drive` boots: a Nest module class, or a dynamic module. */
export type GenevaDriveCliApp = Type<unknown> | DynamicModule;

function isAppModule(value: unknown): value is GenevaDriveCliApp {
  if (typeof value === 'function') return true;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<DynamicModule>).module === 'function'
  );
}

/**
 * Loads the module named by `reference`, its file resolved against `cwd`, with `require()`: a
 * compiled CommonJS file, or (Node ≥ 22.12) an ES module; a `.ts` file only with a loader
 * registered (`NODE_OPTIONS='-r ts-node/register'`).
 */
export function loadAppModule(reference: AppReference, cwd: string): GenevaDriveCliApp {
  const path = resolve(cwd, reference.file);
  if (!existsSync(path)) {
    throw new CliUsageError(
      `--app: no file at ${path}. Give the path of the compiled module file (run your build first), relative to the current directory.`,
    );
  }
  let exports: Record<string, unknown>;
  try {
    // A path known only at run time, loaded as Node loads the app's own files (under jest, through
    // its transform and module registry, so a test's module shares the library's classes).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    exports = require(path) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof ModuleOptionsError) throw error;
    const hint =
      extname(path) === '.ts'
        ? ' A .ts file needs a TypeScript loader: run with NODE_OPTIONS="-r ts-node/register", or point --app at the compiled .js file.'
        : '';
    throw new CliUsageError(
      `--app: loading ${path} failed: ${error instanceof Error ? error.message : String(error)}.${hint}`,
      { cause: error },
    );
  }
  const value = exports[reference.exportName];
  if (!isAppModule(value)) {
    const found = Object.keys(exports).filter((name) => isAppModule(exports[name]));
    throw new CliUsageError(
      `--app: ${path} exports no module named '${reference.exportName}'` +
        (found.length > 0 ? ` (it exports ${found.join(', ')}).` : '.') +
        ' Export the Nest module class that imports GenevaDriveModule, and name it after the #.',
    );
  }
  return value;
}
