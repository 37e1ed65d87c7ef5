import { readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';

/** The version of an installed package, or null when it is not installed or cannot be read. */
export type InstalledVersionReader = (packageName: string) => string | null;

/** DI token of the `InstalledVersionReader` the boot check uses (`readInstalledVersion`). */
export const INSTALLED_VERSION_READER = Symbol('GENEVA_DRIVE_INSTALLED_VERSION_READER');

const versions = new Map<string, string | null>();

/**
 * The version of the copy of `packageName` this library loads, read once per process.
 *
 * The package is resolved the way the library's own `require()` resolves it (the copy whose API
 * the library calls, also under pnpm or in a monorepo where the app has another copy), then the
 * nearest `package.json` above its entry file whose `name` is the package's gives the version.
 * Only public interfaces are involved: the package's entry point and its manifest, read from disk.
 * `require('<name>/package.json')` is not used: a package's `exports` map need not export it
 * (TypeORM 1.x maps `./*` to `./*.js`).
 */
export const readInstalledVersion: InstalledVersionReader = (packageName) => {
  if (!versions.has(packageName)) {
    versions.set(
      packageName,
      findInstalledVersion(packageName, (id) => require.resolve(id)),
    );
  }
  return versions.get(packageName) ?? null;
};

/**
 * Resolves `packageName` with `resolve` and walks up from its entry file to the nearest
 * `package.json` named `packageName` (skipping nameless ones such as a `dist/cjs/package.json`
 * that only sets `type`), without leaving the package's `node_modules` folder. Null when the
 * package does not resolve (an absent optional peer), when the resolver returns no file path
 * (a bundler's module id), or when no such manifest is found.
 */
export function findInstalledVersion(
  packageName: string,
  resolve: (id: string) => string,
): string | null {
  let entry: unknown;
  try {
    entry = resolve(packageName);
  } catch {
    return null;
  }
  if (typeof entry !== 'string' || !isAbsolute(entry)) return null;
  let directory = dirname(entry);
  for (;;) {
    const manifest = readManifest(join(directory, 'package.json'));
    if (manifest?.name === packageName) {
      return typeof manifest.version === 'string' ? manifest.version : null;
    }
    const parent = dirname(directory);
    if (parent === directory || basename(parent) === 'node_modules') return null;
    directory = parent;
  }
}

function readManifest(path: string): { name?: unknown; version?: unknown } | null {
  try {
    const manifest: unknown = JSON.parse(readFileSync(path, 'utf8'));
    return typeof manifest === 'object' && manifest !== null ? manifest : null;
  } catch {
    return null;
  }
}
