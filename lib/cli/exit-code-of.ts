import { InvalidArgumentError } from '../errors/invalid-argument.error';
import { ModuleOptionsError } from '../errors/module-options.error';
import { CliConnectionError } from './cli-connection.error';
import { CliExitCode } from './cli-exit-code';
import { CliUsageError } from './cli-usage.error';

/**
 * Error codes of a connection that could not be made or was lost: Node's sockets and DNS,
 * PostgreSQL's authentication and unknown-database codes, MySQL/MariaDB's, SQLite's unopenable file.
 */
const CONNECTION_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  '28P01',
  '28000',
  '3D000',
  'PROTOCOL_CONNECTION_LOST',
  'ER_ACCESS_DENIED_ERROR',
  'ER_BAD_DB_ERROR',
  'SQLITE_CANTOPEN',
]);

/** Whether `error` (or its `cause`, or one of an `AggregateError`'s errors) failed to connect. */
export function isConnectionError(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  if (error instanceof CliConnectionError) return true;
  const { code, cause, errors } = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof code === 'string' && CONNECTION_ERROR_CODES.has(code)) return true;
  if (isConnectionError(cause, depth + 1)) return true;
  return Array.isArray(errors) && errors.some((inner) => isConnectionError(inner, depth + 1));
}

/**
 * commander's own errors (it throws them once told not to exit): help and `--version` asked
 * for are done, any other one is a usage error.
 */
function commanderExitCode(error: object): CliExitCode | null {
  const { code, exitCode } = error as { code?: unknown; exitCode?: unknown };
  if (typeof code !== 'string' || !code.startsWith('commander.')) return null;
  return exitCode === 0 ? CliExitCode.done : CliExitCode.usage;
}

/** The exit code `geneva-drive` ends with after `error`. */
export function exitCodeOf(error: unknown): CliExitCode {
  if (typeof error === 'object' && error !== null) {
    const commander = commanderExitCode(error);
    if (commander !== null) return commander;
  }
  if (isConnectionError(error)) return CliExitCode.cannotConnect;
  if (
    error instanceof CliUsageError ||
    error instanceof InvalidArgumentError ||
    error instanceof ModuleOptionsError
  ) {
    return CliExitCode.usage;
  }
  return CliExitCode.refused;
}
