import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The package's entry points as consumers' resolvers see them. `node16`/`nodenext`/`bundler` read
 * `exports`: an `import` takes the ES module entry (a wrapper re-exporting the CommonJS build,
 * with .d.mts declarations, written by scripts/build-esm-entries.mjs), a `require` the CommonJS
 * build. `"moduleResolution": "node"` (node10, NestJS 11's application template) reads only
 * `typesVersions` for a subpath, so every subpath in `exports` needs its twin there, or
 * `import … from 'nestjs-geneva-drive/testing'` is TS2307 for those apps. test/consumers
 * type-checks every subpath under each resolution; this keeps the maps from drifting.
 */
interface Target {
  types: string;
  default: string;
}
interface EntryPoint {
  import: Target;
  require: Target;
}

const ROOT = resolve(__dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  main: string;
  types: string;
  exports: Record<string, EntryPoint>;
  typesVersions: Record<string, Record<string, string[]>>;
  files: string[];
  scripts: Record<string, string>;
};
const subpaths = Object.keys(pkg.exports).filter((key) => key !== '.');
const entries = Object.entries(pkg.exports);

describe('package.json entry points', () => {
  it('every export has an `import` and a `require` condition, in that order', () => {
    for (const [key, entry] of entries) {
      expect([key, Object.keys(entry)]).toEqual([key, ['import', 'require']]);
    }
  });

  it('lists `types` first in every condition (resolvers take the first matching one)', () => {
    for (const [key, entry] of entries) {
      for (const target of [entry.import, entry.require]) {
        expect([key, Object.keys(target)]).toEqual([key, ['types', 'default']]);
      }
    }
  });

  it('the root `require` export is `main`/`types`', () => {
    expect(pkg.exports['.'].require).toEqual({
      types: `./${pkg.types}`,
      default: `./${pkg.main}`,
    });
  });

  it.each(entries)(
    '%s: `import` is the ES module twin of `require` (.mjs, .d.mts beside it)',
    (_key, entry) => {
      expect(entry.import).toEqual({
        types: entry.require.types.replace(/\.d\.ts$/, '.d.mts'),
        default: entry.require.default.replace(/\.js$/, '.mjs'),
      });
      expect(entry.require.types).toMatch(/\.d\.ts$/);
      expect(entry.require.default).toMatch(/\.js$/);
    },
  );

  it('the build writes the ES module entries', () => {
    expect(pkg.scripts.build).toMatch(/&& node scripts\/build-esm-entries\.mjs$/);
  });

  it.each(subpaths)('typesVersions maps %s to the CommonJS types of its export', (subpath) => {
    const name = subpath.replace(/^\.\//, '');
    expect(pkg.typesVersions['*'][name]).toEqual([pkg.exports[subpath].require.types]);
  });

  it('typesVersions names no subpath that is not exported', () => {
    expect(Object.keys(pkg.typesVersions['*']).map((name) => `./${name}`)).toEqual(subpaths);
  });

  it('every entry point is built from a lib/ source that exists, inside the published files', () => {
    for (const entry of Object.values(pkg.exports)) {
      for (const target of [entry.import, entry.require].flatMap((t) => [t.types, t.default])) {
        expect([target, pkg.files.some((dir) => target.startsWith(`./${dir}/`))]).toEqual([
          target,
          true,
        ]);
        const source = target.replace(/^\.\/dist\//, '').replace(/\.(d\.m?ts|m?js)$/, '.ts');
        expect([target, existsSync(join(ROOT, source))]).toEqual([target, true]);
      }
    }
  });
});
