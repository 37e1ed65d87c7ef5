/**
 * A require hook for the worker children of the reliability suite: transpiles .ts files with the
 * project's compiler options (like ts-node's transpile-only mode) and caches the output on disk,
 * keyed by path and content, so restarting a worker does not transpile the library again. The
 * worker children are restarted many times per scenario; this keeps a restart near a second.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS require hook, loaded with node -r */
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const ts = require('typescript');

const project = path.join(__dirname, '..', '..', '..', 'tsconfig.json');
const { config } = ts.readConfigFile(project, ts.sys.readFile);
const { options } = ts.convertCompilerOptionsFromJson(
  config.compilerOptions,
  path.dirname(project),
);
const compilerOptions = {
  ...options,
  module: ts.ModuleKind.CommonJS,
  declaration: false,
  sourceMap: false,
  inlineSourceMap: true,
  inlineSources: false,
};
const cacheDir = path.join(os.tmpdir(), `geneva-reliability-ts-${ts.version}`);
fs.mkdirSync(cacheDir, { recursive: true });

require.extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const key = crypto.createHash('sha1').update(filename).update('\0').update(source).digest('hex');
  const cached = path.join(cacheDir, `${key}.js`);
  let output;
  try {
    output = fs.readFileSync(cached, 'utf8');
  } catch {
    output = ts.transpileModule(source, { compilerOptions, fileName: filename }).outputText;
    const temporary = `${cached}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, output);
    fs.renameSync(temporary, cached);
  }
  module._compile(output, filename);
};
