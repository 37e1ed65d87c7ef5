/**
 * PostgreSQL SQLSTATEs of a lost connection, a server going away, a conflict worth a retry, or a
 * prepared statement someone else deallocated (26000; the retry prepares it again).
 */
const POSTGRES_TRANSIENT = /^(08...|57P0[123]|40001|40P01|53300|26000)$/;
/** MySQL/MariaDB and Node socket codes of the same. */
const DRIVER_TRANSIENT = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'ER_LOCK_DEADLOCK',
  'ER_LOCK_WAIT_TIMEOUT',
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'SQLITE_BUSY',
]);
/** node-postgres reports some losses only by message. */
const TRANSIENT_MESSAGES = [
  'Connection terminated',
  'connection error and is not queryable',
  'terminating connection',
];
/** Of those, the lost lock conflicts: serialization failure, deadlock, lock wait timeout. */
const POSTGRES_LOCK_CONFLICT = /^(40001|40P01)$/;
const DRIVER_LOCK_CONFLICT = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT']);

/**
 * Whether `error` says the database was briefly unreachable or the transaction lost a conflict:
 * nothing was written (the transaction rolled back) and the same work may simply run again. Any
 * other error, a SQL error included, is a fault of its own and goes to the exception policy.
 * A connection lost at COMMIT leaves open whether it committed, so only work that is fenced by
 * the rows' state (the engine's own transactions) runs again on every such error.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  // TypeORM's, for a transaction whose connection went away (matched by name: no driver import here).
  if ((error as { name?: unknown }).name === 'QueryRunnerAlreadyReleasedError') return true;
  if (hasCode(error, (code) => POSTGRES_TRANSIENT.test(code) || DRIVER_TRANSIENT.has(code)))
    return true;
  const { driverError, message } = error as { driverError?: unknown; message?: unknown };
  if (driverError && driverError !== error && isTransientDatabaseError(driverError)) return true;
  return (
    typeof message === 'string' && TRANSIENT_MESSAGES.some((fragment) => message.includes(fragment))
  );
}

/**
 * Whether `error` is a lock conflict the database resolved by rolling this transaction back (a
 * deadlock victim, a serialization failure, a lock wait timeout): certainly nothing was written,
 * so even work that is not idempotent (a signal without an idempotency key) may run again.
 */
export function isLockConflictError(error: unknown): boolean {
  return hasCode(
    error,
    (code) => POSTGRES_LOCK_CONFLICT.test(code) || DRIVER_LOCK_CONFLICT.has(code),
  );
}

/** Whether the error's code, or the code of the driver error TypeORM wraps, matches. */
function hasCode(error: unknown, matches: (code: string) => boolean): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { code, driverError } = error as { code?: unknown; driverError?: unknown };
  if (typeof code === 'string' && matches(code)) return true;
  return driverError !== error && driverError !== undefined && hasCode(driverError, matches);
}

/**
 * Runs `work` (a whole transaction), running it again after each delay while it fails with a
 * transient database error; the last error is thrown.
 */
export function retryTransientDatabaseErrors<T>(
  work: () => Promise<T>,
  delaysMs: readonly number[],
): Promise<T> {
  return retryWhile(work, delaysMs, isTransientDatabaseError);
}

async function retryWhile<T>(
  work: () => Promise<T>,
  delaysMs: readonly number[],
  retriable: (error: unknown) => boolean,
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= delaysMs.length || !retriable(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, delaysMs[attempt]));
    }
  }
}

/** The waits before a public call's transaction runs again after a lost lock conflict. */
export const LOCK_CONFLICT_RETRY_DELAYS_MS = [50, 200, 500, 1_000] as const;

/**
 * Runs `work` (a whole transaction of its own, never a caller's: that one is lost with the
 * error) again after each delay while it loses a lock conflict (see `isLockConflictError`).
 */
export function retryLockConflicts<T>(
  work: () => Promise<T>,
  delaysMs: readonly number[],
): Promise<T> {
  return retryWhile(work, delaysMs, isLockConflictError);
}
