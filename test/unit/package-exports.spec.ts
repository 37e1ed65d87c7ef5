import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The package's entry points as consumers' resolvers see them. `node16`/`nodenext`/`bundler` read
 * `exports`; `"moduleResolution": "node"` (node10, NestJS 11's application template) reads only
 * `typesVersions` for a subpath, so every subpath in `exports` needs its twin there, or
 * `import … from 'nestjs-geneva-drive/testing'` is TS2307 for those apps. test/consumers
 * type-checks every subpath under each resolution; this keeps the two maps from drifting.
 */
interface EntryPoint {
  types: string;
  default: string;
}

const ROOT = resolve(__dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  main: string;
  types: string;
  exports: Record<string, EntryPoint>;
  typesVersions: Record<string, Record<string, string[]>>;
  files: string[];
};
const subpaths = Object.keys(pkg.exports).filter((key) => key !== '.');

describe('package.json entry points', () => {
  it('lists `types` first in every export (resolvers take the first matching condition)', () => {
    for (const [key, entry] of Object.entries(pkg.exports)) {
      expect([key, Object.keys(entry)]).toEqual([key, ['types', 'default']]);
    }
  });

  it('the root export is `main`/`types`', () => {
    expect(pkg.exports['.']).toEqual({ types: `./${pkg.types}`, default: `./${pkg.main}` });
  });

  it.each(subpaths)('typesVersions maps %s to the types of its export', (subpath) => {
    const name = subpath.replace(/^\.\//, '');
    expect(pkg.typesVersions['*'][name]).toEqual([pkg.exports[subpath].types]);
  });

  it('typesVersions names no subpath that is not exported', () => {
    expect(Object.keys(pkg.typesVersions['*']).map((name) => `./${name}`)).toEqual(subpaths);
  });

  it('every entry point is built from a lib/ source that exists, inside the published files', () => {
    for (const entry of Object.values(pkg.exports)) {
      for (const target of [entry.types, entry.default]) {
        expect(pkg.files.some((dir) => target.startsWith(`./${dir}/`))).toBe(true);
        const source = target.replace(/^\.\/dist\//, '').replace(/\.(d\.ts|js)$/, '.ts');
        expect([target, existsSync(join(ROOT, source))]).toEqual([target, true]);
      }
    }
  });
});
