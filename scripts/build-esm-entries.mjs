#!/usr/bin/env node
// The ESM face of the CommonJS build, run by `npm run build` after tsc.
//
// For every `exports` entry with an `import` condition it writes:
// - `import.default` (.mjs): `export { …every name… } from './index.js'`, a wrapper around the
//   CommonJS entry. ESM and CommonJS consumers share one copy of the module state (DI tokens are
//   classes: an ESM app and a CommonJS dependency of it must inject the same ones).
// - ESM declarations (.d.mts) beside every .d.ts, relative imports spelled as ESM needs them
//   (`./x.mjs`, `./dir/index.mjs`). Under `module: node16` an ES module that reads our CommonJS
//   declarations resolves their `@nestjs/common` import as `require`, which fails (TS1479) for
//   the ESM-only NestJS 12; the .d.mts files resolve it as `import`.
//
// The names come from require() of the built entry; Node links an ESM `export { … } from` a
// CommonJS file only when its cjs-module-lexer finds each name, so the import at the end fails
// the build if it misses one, and checks that every name is the same object both ways.
import { createRequire } from 'node:module';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = resolve(import.meta.dirname, '..');
const require = createRequire(join(ROOT, 'package.json'));
const ts = require('typescript');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

function* filesUnder(dir, suffix) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path, suffix);
    else if (entry.name.endsWith(suffix)) yield path;
  }
}

/** `./x` of a declaration in `dir` as an ES module names it: `./x.mjs` or `./x/index.mjs`. */
function esmSpecifier(specifier, dir, file) {
  const target = resolve(dir, specifier);
  if (existsSync(`${target}.d.ts`)) return `${specifier}.mjs`;
  if (existsSync(join(target, 'index.d.ts'))) return `${specifier}/index.mjs`;
  throw new Error(`${relative(ROOT, file)}: '${specifier}' names no declaration file`);
}

/** Positions of the relative module specifiers in a declaration file, last first. */
function relativeSpecifiers(sourceFile) {
  const found = [];
  const visit = (node) => {
    let literal;
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node))
      literal = node.moduleSpecifier;
    else if (ts.isImportTypeNode(node)) literal = node.argument?.literal;
    if (literal && ts.isStringLiteralLike(literal) && literal.text.startsWith('.'))
      found.push(literal);
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found.sort((a, b) => b.getStart() - a.getStart());
}

function writeEsmDeclarations(typesDir) {
  for (const stale of filesUnder(typesDir, '.d.mts')) rmSync(stale);
  let count = 0;
  for (const file of filesUnder(typesDir, '.d.ts')) {
    let text = readFileSync(file, 'utf8');
    const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    for (const literal of relativeSpecifiers(sourceFile)) {
      const quote = text[literal.getStart()];
      const spelled = esmSpecifier(literal.text, dirname(file), file);
      text = `${text.slice(0, literal.getStart())}${quote}${spelled}${quote}${text.slice(literal.getEnd())}`;
    }
    writeFileSync(file.replace(/\.d\.ts$/, '.d.mts'), text);
    count++;
  }
  return count;
}

function writeWrapper(cjsPath, esmPath) {
  const names = Object.keys(require(cjsPath)).sort();
  const from = `./${relative(dirname(esmPath), cjsPath)}`;
  writeFileSync(
    esmPath,
    `// The ES module entry: the CommonJS build's exports (${basename(cjsPath)}), one copy of the state.\n` +
      `export {\n${names.map((name) => `  ${name},\n`).join('')}} from '${from}';\n`,
  );
  return names;
}

const entries = Object.entries(pkg.exports).filter(([, entry]) => entry.import);
if (entries.length === 0) throw new Error('package.json exports: no entry has an import condition');
const declarations = writeEsmDeclarations(resolve(ROOT, dirname(pkg.types)));

for (const [subpath, entry] of entries) {
  const cjsPath = resolve(ROOT, entry.require.default);
  const esmPath = resolve(ROOT, entry.import.default);
  for (const path of [cjsPath, resolve(ROOT, entry.import.types)]) {
    if (!existsSync(path) || !statSync(path).isFile())
      throw new Error(`exports['${subpath}']: ${relative(ROOT, path)} was not built`);
  }
  const names = writeWrapper(cjsPath, esmPath);
  const esm = await import(pathToFileURL(esmPath).href);
  const cjs = require(cjsPath);
  const differing = names.filter((name) => esm[name] !== cjs[name]);
  if (differing.length > 0)
    throw new Error(
      `${relative(ROOT, esmPath)}: not the CommonJS objects: ${differing.join(', ')}`,
    );
  console.log(`${subpath}: ${relative(ROOT, esmPath)} re-exports ${names.length} names`);
}
console.log(`${declarations} ESM declaration files (.d.mts)`);
