import { formatValue } from '../common/duration';
import { ModuleOptionsError } from '../errors/module-options.error';
import type { GenevaDriveModuleAsyncOptions } from '../interfaces/module-options.interface';
import { resolveModuleOptions } from './resolve-module-options';
import { unknownOptionProblem } from './unknown-option';

const ASYNC_OPTION_KEYS = [
  'imports',
  'inject',
  'useFactory',
  'useClass',
  'useExisting',
  'queues',
  'transport',
  'isGlobal',
  'provideInjectionTokensFrom',
];
const FACTORY_KEYS = ['useFactory', 'useClass', 'useExisting'] as const;

/**
 * `GenevaDriveModule.forRoot(options)` takes an options object or nothing. Checked when
 * `forRoot()` is called, because the synchronous `queues` are read right there; the options
 * themselves are validated at boot (`resolveModuleOptions`).
 */
export function validateForRootArgument(options: unknown): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ModuleOptionsError(
      `GenevaDriveModule.forRoot() expects an options object (or nothing for the defaults), but got ${formatValue(options)}.`,
    );
  }
  // An own `__proto__` key (JSON.parse makes one) would become the options' prototype when the
  // module builder copies the keys, and its contents would then be read as options unvalidated.
  if (Object.prototype.hasOwnProperty.call(options, '__proto__')) {
    throw new ModuleOptionsError(
      'GenevaDriveModule.forRoot() has invalid options: __proto__ is not a known option.',
    );
  }
}

/**
 * `GenevaDriveModule.forRootAsync(options)`: an object with exactly one of `useFactory` (a
 * function), `useClass` or `useExisting` (a class), `inject`/`imports` arrays, a boolean
 * `isGlobal`, and valid synchronous `queues` and `transport` (they decide the module's providers,
 * so they are checked now).
 * Throws `ModuleOptionsError` naming every offending key.
 */
export function validateForRootAsyncArgument(
  options: unknown,
): asserts options is GenevaDriveModuleAsyncOptions {
  const source = 'GenevaDriveModule.forRootAsync()';
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ModuleOptionsError(
      `${source} expects { useFactory, inject?, imports?, queues?, transport?, isGlobal? } (or useClass / useExisting), but got ${formatValue(options)}.`,
    );
  }
  const record = options as Record<string, unknown>;
  const problems: string[] = [];
  for (const key of Object.keys(record)) {
    if (!ASYNC_OPTION_KEYS.includes(key)) {
      problems.push(unknownOptionProblem('', key, ASYNC_OPTION_KEYS));
    }
  }
  const given = FACTORY_KEYS.filter((key) => record[key] !== undefined);
  if (given.length !== 1) {
    problems.push(
      given.length === 0
        ? 'one of useFactory, useClass or useExisting is required'
        : `give only one of ${given.join(', ')}`,
    );
  }
  for (const key of FACTORY_KEYS) {
    if (record[key] !== undefined && typeof record[key] !== 'function') {
      problems.push(
        `${key} must be a ${key === 'useFactory' ? 'function' : 'class'}, but was ${formatValue(record[key])}`,
      );
    }
  }
  for (const key of ['inject', 'imports'] as const) {
    if (record[key] !== undefined && !Array.isArray(record[key])) {
      problems.push(`${key} must be an array, but was ${formatValue(record[key])}`);
    }
  }
  if (record.isGlobal !== undefined && typeof record.isGlobal !== 'boolean') {
    problems.push(`isGlobal must be a boolean, but was ${formatValue(record.isGlobal)}`);
  }
  if (record.queues !== undefined || record.transport !== undefined) {
    try {
      resolveModuleOptions({ queues: record.queues, transport: record.transport } as never, source);
    } catch (error) {
      if (!(error instanceof ModuleOptionsError)) throw error;
      problems.push(
        error.message.replace(`${source} has invalid options: `, '').replace(/\.$/, ''),
      );
    }
  }
  if (problems.length > 0) {
    throw new ModuleOptionsError(`${source} has invalid options: ${problems.join('; ')}.`);
  }
}
