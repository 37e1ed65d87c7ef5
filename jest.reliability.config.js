/**
 * The fault-injection suite (test/reliability): real worker processes, SIGKILL/SIGTERM, Redis
 * flushes and restarts, PostgreSQL backends terminated and the server restarted, on a private
 * PostgreSQL cluster and Redis per scenario. Run by itself with `npm run test:reliability`;
 * `npm test` leaves it out.
 */
/* eslint-disable @typescript-eslint/no-require-imports -- jest loads this file as CommonJS */
const path = require('node:path');
const ts = require('typescript');
const base = require('./jest.config');

// tsconfig.json may carry comments: read it as TypeScript does.
const { config: tsconfig } = ts.readConfigFile(
  path.join(__dirname, 'tsconfig.json'),
  ts.sys.readFile,
);

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  roots: ['<rootDir>/test/reliability'],
  // Transpile only: `npm run typecheck` type-checks these files; the suite's time goes to faults.
  transform: {
    ...base.transform,
    '^.+\\.ts$': [
      'ts-jest',
      {
        tsconfig: {
          ...tsconfig.compilerOptions,
          rootDir: __dirname,
          isolatedModules: true,
        },
      },
    ],
  },
  testPathIgnorePatterns: ['/node_modules/'],
  testTimeout: 240000,
};
