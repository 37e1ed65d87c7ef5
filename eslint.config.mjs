// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import importPlugin from 'eslint-plugin-import';
import globals from 'globals';
import tseslint from 'typescript-eslint';
import noSqlFromValues from './eslint-rules/no-sql-from-values.cjs';

// SPEC §16.1 and STYLE ("TypeScript and tooling"): depend on public APIs only. A private module path
// of a framework package changes in a minor, and the ESM-only majors (NestJS 12, TypeORM 1.x) close
// them behind `exports`.
const PUBLIC_API_ONLY = 'SPEC §16.1 / STYLE: public APIs only, never a package internal.';
const DEEP_IMPORTS = [
  {
    regex: '^typeorm/',
    message: `Import from 'typeorm', not a subpath of it. ${PUBLIC_API_ONLY}`,
  },
  {
    regex: '^bullmq/',
    message: `Import from 'bullmq', not a subpath of it. ${PUBLIC_API_ONLY}`,
  },
  {
    // NestJS 12's `exports` map opens every file ("./*"), but only the entry point is public.
    regex: '^@nestjs/[^/]+/',
    message: `Import from the @nestjs package's entry point, not a file inside it. ${PUBLIC_API_ONLY}`,
  },
  {
    regex: '^(?:pg|mysql2)/lib(?:/|$)',
    message: `Import from 'pg' / 'mysql2' (or 'mysql2/promise'), not their lib/ files. ${PUBLIC_API_ONLY}`,
  },
];
// Packages only the adapters (lib/adapters) and the module wiring may import as values.
const DRIVER_PACKAGES = [
  'typeorm',
  '@nestjs/typeorm',
  'pg',
  'mysql2',
  'mysql2/promise',
  'better-sqlite3',
  'bullmq',
  '@nestjs/bullmq',
  'ioredis',
];
// The same paths reached by require(), import() or an `import('…')` type, which no-restricted-imports does not see.
const DEEP_IMPORT_SOURCE =
  '/^(?:typeorm\\u002F|bullmq\\u002F|@nestjs\\u002F[^\\u002F]+\\u002F|(?:pg|mysql2)\\u002Flib)/';
const DEEP_IMPORT_MESSAGE = `Deep import into typeorm/bullmq/@nestjs/pg lib/mysql2 lib. ${PUBLIC_API_ONLY}`;

export default tseslint.config(
  {
    // test/consumers/app: sources of the consumer apps, linted by nothing but their own tsc.
    ignores: ['dist/', 'bench/.build/', 'node_modules/', 'coverage/', 'jest.config.js', 'test/consumers/app/'],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      globals: { ...globals.node },
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { import: importPlugin },
    settings: {
      'import/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import/resolver': { node: { extensions: ['.ts', '.js', '.json'] } },
      'import/extensions': ['.ts', '.js'],
    },
    rules: {
      // An engine that drops a promise loses work.
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      // Circular imports break decorator metadata and module init order. `import type` is exempt.
      // Cost: about 3 s of a 9 s `eslint lib` on 2 cores (TIMING=1 shows it).
      'import/no-cycle': ['error', { ignoreExternal: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    files: ['lib/**/*.ts'],
    plugins: { 'geneva-drive': { rules: { 'no-sql-from-values': noSqlFromValues } } },
    rules: {
      // SPEC §16.1: no value is ever rendered into SQL text (eslint-rules/no-sql-from-values.cjs).
      'geneva-drive/no-sql-from-values': 'error',
      '@typescript-eslint/no-restricted-imports': ['error', { patterns: DEEP_IMPORTS }],
      'no-restricted-syntax': [
        'error',
        {
          selector: `ImportExpression[source.value=${DEEP_IMPORT_SOURCE}]`,
          message: DEEP_IMPORT_MESSAGE,
        },
        {
          selector: `CallExpression[callee.name='require'][arguments.0.value=${DEEP_IMPORT_SOURCE}]`,
          message: DEEP_IMPORT_MESSAGE,
        },
        {
          selector: `TSImportType[argument.literal.value=${DEEP_IMPORT_SOURCE}]`,
          message: DEEP_IMPORT_MESSAGE,
        },
      ],
    },
  },
  {
    // SPEC §16.1 layers: everything but the adapters, the entities/migrations and the module wiring
    // reaches the database and the transport through ports (WorkflowRepository, StepJobQueue).
    // Types of the drivers may appear where the public API names them (EntityManager, queries).
    files: [
      'lib/{api,common,compatibility,decorators,discovery,errors,housekeeping,interfaces,observability}/**/*.ts',
      'lib/{options,ports,queue,resumable,runner,scheduling,service,signals,testing}/**/*.ts',
    ],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: DRIVER_PACKAGES.map((name) => ({
            name,
            allowTypeImports: true,
            message: `${name} is an adapter's dependency: go through the port (lib/ports). SPEC §16.1.`,
          })),
          patterns: [
            ...DEEP_IMPORTS,
            {
              group: ['**/adapters/**'],
              message: 'Adapters are chosen by the module wiring; depend on lib/ports. SPEC §16.1.',
            },
          ],
        },
      ],
    },
  },
  {
    // Plain JS/ESM config files are not part of the TypeScript project.
    files: ['**/*.mjs', '**/*.cjs', '**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Tests read untyped values (JSON columns, jest mocks, error payloads) and assert on them;
      // the assertion is the type check.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      // `expect(obj.method).toHaveBeenCalled()` and passing prototype methods to the engine.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // A copy of the binding contract (/work/shared/contract.d.ts) kept verbatim so it can be
    // diffed against the original; its `any` and `Duration | BackoffStrategy` are the contract's.
    files: ['test/contract/contract.d.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-redundant-type-constituents': 'off',
    },
  },
  prettier,
);
