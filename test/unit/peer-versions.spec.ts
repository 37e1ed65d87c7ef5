import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SUPPORTED_PEER_VERSIONS } from '../../lib/common/constants';
import {
  findInstalledVersion,
  readInstalledVersion,
  type InstalledVersionReader,
} from '../../lib/compatibility/installed-version.reader';
import {
  findUnsupportedPeers,
  unsupportedPeersMessage,
} from '../../lib/compatibility/unsupported-peers';

/** A reader reporting `versions`, and every other checked peer at a supported version. */
function stub(versions: Record<string, string | null>): InstalledVersionReader {
  const supported: Record<string, string> = {
    '@nestjs/common': '11.1.6',
    '@nestjs/core': '11.1.6',
    '@nestjs/typeorm': '11.0.0',
    '@nestjs/bullmq': '11.0.3',
    '@nestjs/schedule': '6.0.1',
    typeorm: '0.3.27',
    bullmq: '5.58.0',
    'class-validator': '0.14.2',
    'class-transformer': '0.5.1',
  };
  return (name) => (name in versions ? versions[name] : (supported[name] ?? null));
}

describe('findUnsupportedPeers', () => {
  it('reports nothing when every peer is inside its range', () => {
    expect(findUnsupportedPeers(stub({}))).toEqual([]);
  });

  it.each([
    ['@nestjs/common', '11.0.0', '12.5.1'],
    ['@nestjs/core', '11.0.0', '12.5.1'],
    ['@nestjs/typeorm', '11.0.0', '12.0.0'],
    ['@nestjs/bullmq', '11.0.0', '12.0.0'],
    ['@nestjs/schedule', '6.0.0', '12.0.2'],
    ['typeorm', '0.3.20', '1.1.1'],
    ['bullmq', '5.0.0', '6.7.0'],
    ['class-validator', '0.14.0', '0.15.1'],
    ['class-transformer', '0.5.1', '0.5.1'],
  ])('accepts %s from %s (the oldest supported) to %s (the newest)', (name, oldest, newest) => {
    expect(findUnsupportedPeers(stub({ [name]: oldest }))).toEqual([]);
    expect(findUnsupportedPeers(stub({ [name]: newest }))).toEqual([]);
  });

  it.each([
    ['@nestjs/common', '10.4.15', '^11'],
    ['@nestjs/core', '13.0.0', '^12'],
    ['@nestjs/typeorm', '10.0.2', '^11'],
    ['@nestjs/bullmq', '10.2.3', '^11'],
    ['@nestjs/schedule', '5.0.1', '^6'],
    ['@nestjs/schedule', '7.0.0', '^12'],
    ['typeorm', '0.3.19', '^0.3.20'],
    ['typeorm', '0.2.45', '^0.3.20'],
    ['typeorm', '2.0.0', '^1'],
    ['bullmq', '4.17.0', '^5'],
    ['bullmq', '7.0.0', '^6'],
    ['class-validator', '0.13.2', '^0.14.0'],
    ['class-validator', '0.16.0', '^0.15.0'],
    ['class-transformer', '0.4.0', '^0.5.1'],
    ['class-transformer', '0.6.0', '^0.5.1'],
  ])('reports %s %s, suggesting %s', (name, installed, install) => {
    expect(findUnsupportedPeers(stub({ [name]: installed }))).toEqual([
      { name, installed, supported: SUPPORTED_PEER_VERSIONS[name], install },
    ]);
  });

  it('leaves out a package that is not installed or whose version is not semver', () => {
    expect(findUnsupportedPeers(stub({ '@nestjs/schedule': null, typeorm: 'workspace' }))).toEqual(
      [],
    );
  });

  it('accepts a prerelease inside a supported major, not one of the next major', () => {
    expect(findUnsupportedPeers(stub({ typeorm: '1.2.0-beta.1' }))).toEqual([]);
    expect(findUnsupportedPeers(stub({ '@nestjs/core': '13.0.0-rc.1' }))).toMatchObject([
      { name: '@nestjs/core', install: '^12' },
    ]);
  });

  it('reports every unsupported package at once', () => {
    expect(
      findUnsupportedPeers(stub({ typeorm: '0.2.45', bullmq: '4.1.0' })).map((peer) => peer.name),
    ).toEqual(['typeorm', 'bullmq']);
  });
});

describe('unsupportedPeersMessage', () => {
  it('names the package, its installed version, the supported range and the install command', () => {
    expect(unsupportedPeersMessage(findUnsupportedPeers(stub({ typeorm: '2.0.0' })))).toBe(
      'nestjs-geneva-drive does not support the installed typeorm 2.0.0 (supported: ^0.3.20 || ^1). ' +
        'Install a supported version: npm install typeorm@^1',
    );
  });

  it('lists several packages and installs them in one command', () => {
    expect(
      unsupportedPeersMessage(findUnsupportedPeers(stub({ typeorm: '0.2.45', bullmq: '4.1.0' }))),
    ).toBe(
      'nestjs-geneva-drive does not support the installed typeorm 0.2.45 (supported: ^0.3.20 || ^1), ' +
        'bullmq 4.1.0 (supported: ^5 || ^6). ' +
        'Install a supported version: npm install typeorm@^0.3.20 bullmq@^5',
    );
  });
});

/** Writes `files` (path → JSON or text) under a fresh directory; resolves the directory. */
function fakeApp(files: Record<string, unknown>): string {
  const root = fs.mkdtempSync(join(tmpdir(), 'gd-peer-versions-'));
  for (const [path, content] of Object.entries(files)) {
    fs.mkdirSync(dirname(join(root, path)), { recursive: true });
    fs.writeFileSync(
      join(root, path),
      typeof content === 'string' ? content : JSON.stringify(content),
    );
  }
  return root;
}

describe('findInstalledVersion', () => {
  // Packaged the way the supported majors are: TypeORM 1.x (conditional exports, `./*` mapped to
  // `./*.js`, no ./package.json export), NestJS 12 (ESM only), BullMQ (entry under dist/cjs next
  // to a nameless package.json that only sets the module type).
  const root = fakeApp({
    'node_modules/typeorm/package.json': {
      name: 'typeorm',
      version: '1.1.1',
      main: './index.js',
      exports: {
        '.': { node: { import: './index.mjs', require: './index.js' } },
        './*.js': './*.js',
        './*': { require: './*.js', import: './*' },
      },
    },
    'node_modules/typeorm/index.js': '',
    'node_modules/@nestjs/common/package.json': {
      name: '@nestjs/common',
      version: '12.5.1',
      type: 'module',
      exports: { '.': './index.js', './*': './*.js' },
    },
    'node_modules/@nestjs/common/index.js': '',
    'node_modules/bullmq/package.json': {
      name: 'bullmq',
      version: '6.7.0',
      exports: { '.': { require: './dist/cjs/index.js', import: './dist/esm/index.js' } },
    },
    'node_modules/bullmq/dist/cjs/package.json': { type: 'commonjs' },
    'node_modules/bullmq/dist/cjs/index.js': '',
    'node_modules/nameless/package.json': { version: '1.0.0' },
    'node_modules/nameless/index.js': '',
    'app.js': '',
  });
  const resolve = (id: string) => createRequire(join(root, 'app.js')).resolve(id);

  afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

  it('reads a package whose exports map hides its package.json (TypeORM 1.x)', () => {
    expect(() => resolve('typeorm/package.json')).toThrow();
    expect(findInstalledVersion('typeorm', resolve)).toBe('1.1.1');
  });

  it('reads an ESM-only package (NestJS 12)', () => {
    expect(findInstalledVersion('@nestjs/common', resolve)).toBe('12.5.1');
  });

  it("skips a nameless package.json between the entry and the package's own", () => {
    expect(findInstalledVersion('bullmq', resolve)).toBe('6.7.0');
  });

  it('is null for a package that is not installed, or whose manifest is not found', () => {
    expect(findInstalledVersion('pg', resolve)).toBeNull();
    expect(findInstalledVersion('nameless', resolve)).toBeNull();
    expect(findInstalledVersion('typeorm', () => '1234')).toBeNull(); // a bundler's module id
  });
});

describe('readInstalledVersion', () => {
  it('reads the version of the copy the library loads', () => {
    for (const name of Object.keys(SUPPORTED_PEER_VERSIONS)) {
      const manifest = JSON.parse(
        fs.readFileSync(join(__dirname, '../../node_modules', name, 'package.json'), 'utf8'),
      ) as { version: string };
      expect(readInstalledVersion(name)).toBe(manifest.version);
    }
  });

  it('reads each package once per process', () => {
    readInstalledVersion('bullmq');
    // The module object the library's `import { readFileSync } from 'node:fs'` reads from.
    const reads = jest.spyOn(jest.requireActual<typeof fs>('node:fs'), 'readFileSync');
    try {
      expect(readInstalledVersion('bullmq')).toMatch(/^\d+\./);
      expect(reads).not.toHaveBeenCalled();
      expect(readInstalledVersion('semver')).toMatch(/^\d+\./);
      expect(reads).toHaveBeenCalled(); // the spy sees the reads of a package not read before
    } finally {
      reads.mockRestore();
    }
  });
});
