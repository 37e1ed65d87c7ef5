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

/**
 * Whether `error` says the database was briefly unreachable or the transaction lost a conflict:
 * nothing was written (the transaction rolled back) and the same work may simply run again. Any
 * other error, a SQL error included, is a fault of its own and goes to the exception policy.
 */
export function isTransientDatabaseError(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  // TypeORM's, for a transaction whose connection went away (matched by name: no driver import here).
  if ((error as { name?: unknown }).name === 'QueryRunnerAlreadyReleasedError') return true;
  const { driverError, code, message } = error as {
    driverError?: unknown;
    code?: unknown;
    message?: unknown;
  };
  if (driverError && driverError !== error && isTransientDatabaseError(driverError)) return true;
  if (typeof code === 'string' && (POSTGRES_TRANSIENT.test(code) || DRIVER_TRANSIENT.has(code)))
    return true;
  return (
    typeof message === 'string' && TRANSIENT_MESSAGES.some((fragment) => message.includes(fragment))
  );
}

/**
 * Runs `work` (a whole transaction), running it again after each delay while it fails with a
 * transient database error; the last error is thrown.
 */
export async function retryTransientDatabaseErrors<T>(
  work: () => Promise<T>,
  delaysMs: readonly number[],
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (attempt >= delaysMs.length || !isTransientDatabaseError(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, delaysMs[attempt]));
    }
  }
}
