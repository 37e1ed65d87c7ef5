/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  // The fault-injection suite runs on its own: `npm run test:reliability` (jest.reliability.config.js).
  testPathIgnorePatterns: ['/node_modules/', '/test/reliability/'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', isolatedModules: false }],
    // NestJS 12 ships ES modules only; jest's loader requires them natively only on Node >= 24.9.
    '^.+\\.m?js$': '<rootDir>/test/support/esm-package.transformer.cjs',
  },
  // Only @nestjs/* may be ESM-only; every other package is CommonJS as published.
  transformIgnorePatterns: ['/node_modules/(?!@nestjs/)'],
  moduleNameMapper: {
    '^nestjs-geneva-drive$': '<rootDir>/lib/index.ts',
    '^nestjs-geneva-drive/testing$': '<rootDir>/lib/testing/index.ts',
    '^nestjs-geneva-drive/opentelemetry$': '<rootDir>/lib/opentelemetry/index.ts',
    '^nestjs-geneva-drive/terminus$': '<rootDir>/lib/terminus/index.ts',
    '^nestjs-geneva-drive/cli$': '<rootDir>/lib/cli/index.ts',
    '^nestjs-geneva-drive/dashboard$': '<rootDir>/lib/dashboard/index.ts',
  },
  testTimeout: 30000,
};
