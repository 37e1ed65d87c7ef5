/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  // The fault-injection suite runs on its own: `npm run test:reliability` (jest.reliability.config.js).
  testPathIgnorePatterns: ['/node_modules/', '/test/reliability/'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json', isolatedModules: false }] },
  moduleNameMapper: {
    '^nestjs-geneva-drive$': '<rootDir>/lib/index.ts',
    '^nestjs-geneva-drive/testing$': '<rootDir>/lib/testing/index.ts',
    '^nestjs-geneva-drive/opentelemetry$': '<rootDir>/lib/opentelemetry/index.ts',
  },
  testTimeout: 30000,
};
