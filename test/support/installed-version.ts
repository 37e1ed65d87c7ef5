import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The version of a package as this checkout installed it: the package.json nearest above its entry
 * point whose name is the package's (an `exports` map may not expose `<name>/package.json`).
 */
export function installedVersion(name: string): string {
  let directory = dirname(require.resolve(name));
  for (;;) {
    try {
      const manifest = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === name && manifest.version) return manifest.version;
    } catch {
      // No package.json here: keep climbing.
    }
    const parent = dirname(directory);
    if (parent === directory) throw new Error(`No package.json named ${name} above its entry.`);
    directory = parent;
  }
}

/** The major version of an installed package. */
export function installedMajor(name: string): number {
  return Number(installedVersion(name).split('.')[0]);
}
