/**
 * The e2e suite against the oldest supported majors (test/oldest-stack/run.sh). Transpile only: the
 * library is type-checked against the newest typings (`npm run typecheck`) and published as
 * JavaScript, so what this run checks is how it behaves on the old packages, not how their typings
 * read our sources. (The consumer tests type-check the published declarations on NestJS 11.)
 */
/* eslint-disable @typescript-eslint/no-require-imports -- jest loads this file as CommonJS */
const path = require('node:path');
const ts = require('typescript');
const base = require('../../jest.config');

// tsconfig.json may carry comments: read it as TypeScript does.
const root = path.resolve(__dirname, '../..');
const { config: tsconfig } = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  rootDir: '../..',
  transform: {
    ...base.transform,
    '^.+\\.ts$': [
      'ts-jest',
      {
        tsconfig: {
          ...tsconfig.compilerOptions,
          rootDir: root,
          isolatedModules: true,
        },
      },
    ],
  },
};
