/**
 * Jest transformer for ESM-only packages (NestJS 12's `@nestjs/*`) under CommonJS jest on Node < 24.9.
 *
 * Plain Node ≥ 20.19 `require()`s an ES module, and so does the library's compiled output; jest's own
 * module loader does so only on Node ≥ 24.9. Below that, jest needs ESM files turned into CommonJS
 * first. This transformer does that with TypeScript's `transpileModule` (already a devDependency),
 * for files of packages whose package.json says `"type": "module"` (and `.mjs` files); every other
 * file passes through untouched, so NestJS 11's CommonJS packages run as published.
 * `import.meta.url` has no CommonJS counterpart in TypeScript's output, so it becomes the file URL
 * of `__filename` before transpiling (`import.meta.dirname`/`filename`: `__dirname`/`__filename`), and `import.meta.resolve(x)` the file URL of `require.resolve(x)`
 * (@nestjs/terminus checks its optional peers with it; a package whose `exports` only has an `import`
 * condition would not resolve that way, but none of those is loaded by the tests). A module that declares a top-level `require` of its own
 * (`const require = createRequire(import.meta.url)`) has it renamed, since CommonJS already binds
 * that name and the transpiled imports call it.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- jest loads transformers as CommonJS */
const { createHash } = require('node:crypto');
const { existsSync, readFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const ts = require('typescript');

const packageTypeByDirectory = new Map();

/** The `type` of the package.json nearest to `directory` ('commonjs' when none says otherwise). */
function packageTypeOf(directory) {
  if (packageTypeByDirectory.has(directory)) return packageTypeByDirectory.get(directory);
  const manifest = join(directory, 'package.json');
  let type;
  if (existsSync(manifest)) {
    type = JSON.parse(readFileSync(manifest, 'utf8')).type === 'module' ? 'module' : 'commonjs';
  } else {
    const parent = dirname(directory);
    type = parent === directory ? 'commonjs' : packageTypeOf(parent);
  }
  packageTypeByDirectory.set(directory, type);
  return type;
}

function isEsm(filename) {
  if (filename.endsWith('.mjs')) return true;
  if (filename.endsWith('.cjs')) return false;
  return packageTypeOf(dirname(filename)) === 'module';
}

const OWN_REQUIRE = /^(?:const|let|var)\s+require\b/m;

const compilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  esModuleInterop: true,
  sourceMap: false,
};

module.exports = {
  getCacheKey(source, filename) {
    return createHash('sha1')
      .update(ts.version)
      .update('\0esm-package-transformer-5\0')
      .update(filename)
      .update('\0')
      .update(source)
      .digest('hex');
  },
  process(source, filename) {
    if (!isEsm(filename)) return { code: source };
    const ownRequire = OWN_REQUIRE.test(source)
      ? source.replace(/\brequire\b/g, '__esmOwnRequire')
      : source;
    const withFileUrl = ownRequire
      .replace(/\bimport\.meta\.url\b/g, "require('node:url').pathToFileURL(__filename).href")
      .replace(/\bimport\.meta\.dirname\b/g, '__dirname')
      .replace(/\bimport\.meta\.filename\b/g, '__filename')
      .replace(
        /\bimport\.meta\.resolve\(/g,
        "((specifier) => require('node:url').pathToFileURL(require.resolve(specifier)).href)(",
      );
    const { outputText } = ts.transpileModule(withFileUrl, { compilerOptions, fileName: filename });
    return { code: outputText };
  },
};
