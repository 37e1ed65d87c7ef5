#!/usr/bin/env node
// Fails when a published declaration file names a module a consumer's `tsc` may not resolve.
//
//   node test/consumers/check-declarations.mjs [package dir]   (default: the repository, after a build)
//
// With `skipLibCheck: false` a consumer's tsc reads every .d.ts we publish and every module it
// names. A deep path into a peer (`typeorm/driver/...`, `@nestjs/core/injector/...`) is a private
// module: NestJS 12 and TypeORM 1.x close them behind `exports`, and any minor may move them
// (SPEC §16.1, STYLE "TypeScript and tooling"). A package that is neither a peer nor a dependency
// is not installed by the consumer at all. Both fail here, with the file and line.
import { builtinModules, createRequire } from 'node:module';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/** Subpaths a peer documents as public entry points (see each package's README). */
const PUBLIC_SUBPATHS = new Set(['mysql2/promise']);

const repoRoot = resolve(import.meta.dirname, '../..');
const ts = createRequire(join(repoRoot, 'package.json'))('typescript');

/** `@scope/name/sub` → `@scope/name`; `name/sub` → `name`. */
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function* declarationFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* declarationFiles(path);
    else if (/\.d\.[cm]?ts$/.test(entry.name)) yield path;
  }
}

/** Every module specifier a declaration file names, with its position. */
function* specifiersOf(sourceFile) {
  for (const ref of sourceFile.typeReferenceDirectives) yield { text: ref.fileName, pos: ref.pos };
  const visit = function* (node) {
    let literal;
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node))
      literal = node.moduleSpecifier;
    else if (ts.isImportTypeNode(node)) literal = node.argument?.literal;
    else if (ts.isExternalModuleReference(node)) literal = node.expression;
    else if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) literal = node.name;
    else if (ts.isCallExpression(node) && node.arguments.length === 1) {
      const callee = node.expression;
      if (
        callee.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(callee) && callee.text === 'require')
      )
        literal = node.arguments[0];
    }
    if (literal && ts.isStringLiteralLike(literal))
      yield { text: literal.text, pos: literal.getStart() };
    for (const child of node.getChildren(sourceFile)) yield* visit(child);
  };
  yield* visit(sourceFile);
}

/** The problems of one package directory (holding package.json and its built declarations). */
export function checkDeclarations(packageDir) {
  const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
  const declared = new Set([
    ...Object.keys(pkg.peerDependencies ?? {}),
    ...Object.keys(pkg.dependencies ?? {}),
  ]);
  const ownSubpaths = new Set(Object.keys(pkg.exports ?? {}).map((key) => join(pkg.name, key)));
  const builtins = new Set([...builtinModules, 'node']);
  const typesRoot = join(packageDir, pkg.types ? pkg.types.split('/')[0] : 'dist');
  const problems = [];
  let files = 0;
  for (const file of declarationFiles(typesRoot)) {
    files++;
    const text = readFileSync(file, 'utf8');
    const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    for (const { text: specifier, pos } of specifiersOf(sourceFile)) {
      if (specifier.startsWith('.') || specifier.startsWith('/')) continue;
      const name = packageName(specifier.replace(/^node:/, ''));
      let problem = null;
      if (specifier.startsWith('node:') || builtins.has(name)) continue;
      if (name === pkg.name) {
        if (!ownSubpaths.has(specifier))
          problem = `'${specifier}' is not in this package's exports`;
      } else if (!declared.has(name)) {
        problem = `'${name}' is neither a peer nor a dependency: consumers do not install it`;
      } else if (specifier !== name && !PUBLIC_SUBPATHS.has(specifier)) {
        problem = `'${specifier}' is a private module of '${name}': import from '${name}'`;
      }
      if (problem) {
        const { line } = sourceFile.getLineAndCharacterOfPosition(pos);
        problems.push(`${relative(packageDir, file)}:${line + 1}: ${problem}`);
      }
    }
  }
  return { files, problems };
}

if (process.argv[1] === import.meta.filename) {
  const packageDir = resolve(process.argv[2] ?? repoRoot);
  const { files, problems } = checkDeclarations(packageDir);
  if (files === 0) {
    console.error(`No declaration files under ${packageDir}: build first (npm run build).`);
    process.exit(1);
  }
  for (const problem of problems) console.error(problem);
  console.log(
    `${files} declaration files, ${problems.length} module references consumers cannot rely on`,
  );
  process.exit(problems.length === 0 ? 0 : 1);
}
