#!/usr/bin/env node
// Run by `npm run build` after tsc: every `bin` of package.json must start with a shebang (tsc
// keeps the one of its source) and be executable, so `./node_modules/.bin/geneva-drive` and a
// checkout's `dist/lib/cli/main.js` run as they are. Fails the build when a bin was not built.
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

for (const [name, file] of Object.entries(pkg.bin ?? {})) {
  const path = join(ROOT, file);
  if (!existsSync(path)) throw new Error(`bin '${name}': ${file} was not built`);
  if (!readFileSync(path, 'utf8').startsWith('#!/usr/bin/env node\n')) {
    throw new Error(`bin '${name}': ${file} does not start with #!/usr/bin/env node`);
  }
  chmodSync(path, statSync(path).mode | 0o111);
  console.log(`bin ${name}: ${file} (executable)`);
}
