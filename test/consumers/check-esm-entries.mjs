#!/usr/bin/env node
// Fails when an ES module consumer does not get the package's CommonJS objects.
//
//   node test/consumers/check-esm-entries.mjs [app dir]   (default: the repository, after a build)
//
// In `dir`, Node imports every subpath of `exports` and requires it: every value the contract
// (test/contract/contract.d.ts) names for that subpath, and every export of the CommonJS build,
// must be there through `import` and be the very object `require` gives (one copy of the module
// state: DI tokens are classes). A name Node's cjs-module-lexer does not see in the CommonJS
// output is missing through `import`.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const repoRoot = resolve(import.meta.dirname, '../..');
const ts = createRequire(join(repoRoot, 'package.json'))('typescript');
const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
const CONTRACT = join(repoRoot, 'test/contract/contract.d.ts');
/** The contract's copy names its modules `nestjs-geneva-drive-contract[/…]`. */
const CONTRACT_NAME = `${pkg.name}-contract`;

/** Values (classes, functions, constants, enums) the contract declares, per module name. */
function contractValues() {
  const source = ts.createSourceFile(
    CONTRACT,
    readFileSync(CONTRACT, 'utf8'),
    ts.ScriptTarget.Latest,
    true,
  );
  const values = new Map();
  for (const statement of source.statements) {
    if (!ts.isModuleDeclaration(statement) || !statement.body) continue;
    const names = [];
    for (const member of statement.body.statements) {
      const exported = member.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
      if (!exported) continue;
      if (ts.isVariableStatement(member))
        names.push(...member.declarationList.declarations.map((d) => d.name.getText(source)));
      else if (
        (ts.isClassDeclaration(member) ||
          ts.isFunctionDeclaration(member) ||
          ts.isEnumDeclaration(member)) &&
        member.name
      )
        names.push(member.name.text);
    }
    values.set(statement.name.text.replace(CONTRACT_NAME, pkg.name), [...new Set(names)]);
  }
  return values;
}

// Runs in the app's directory, so the package and its peers resolve as the app's own imports do.
const PROBE = `
import { createRequire } from 'node:module';
const require = createRequire(process.cwd() + '/');
const problems = [];
for (const [specifier, expected] of Object.entries(JSON.parse(process.argv[1]))) {
  const esm = await import(specifier);
  const cjs = require(specifier);
  for (const name of new Set([...expected, ...Object.keys(cjs)])) {
    if (!(name in esm)) problems.push(specifier + ': ' + name + ' is not exported to import');
    else if (esm[name] !== cjs[name])
      problems.push(specifier + ': ' + name + ' through import is not the object require() gives');
  }
  console.log(specifier + ': ' + Object.keys(cjs).length + ' exports, ' + expected.length + ' contract values');
}
for (const problem of problems) console.error(problem);
process.exit(problems.length === 0 ? 0 : 1);
`;

/** Resolves { output, passed, skipped } for the package as installed (or self-referenced) in dir. */
export function checkEsmEntries(dir, node = process.execPath) {
  const contract = contractValues();
  const expected = {};
  for (const subpath of Object.keys(pkg.exports)) {
    const specifier = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
    expected[specifier] = contract.get(specifier) ?? [];
  }
  const skipped = [...contract.keys()].filter((name) => !(name in expected));
  const probe = spawnSync(node, ['--input-type=module', '-e', PROBE, JSON.stringify(expected)], {
    cwd: dir,
    encoding: 'utf8',
  });
  return {
    output: `${probe.stdout}${probe.stderr}`,
    passed: probe.status === 0,
    skipped,
  };
}

if (process.argv[1] === import.meta.filename) {
  const { output, passed, skipped } = checkEsmEntries(resolve(process.argv[2] ?? repoRoot));
  process.stdout.write(output);
  if (skipped.length > 0)
    console.log(`contract modules not in exports (not built yet): ${skipped.join(', ')}`);
  process.exit(passed ? 0 : 1);
}
