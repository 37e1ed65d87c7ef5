import { QueryFailedError, QueryRunnerAlreadyReleasedError } from 'typeorm';
import {
  isLockConflictError,
  isTransientDatabaseError,
  retryLockConflicts,
  retryTransientDatabaseErrors,
} from '../../lib/common/transient-database-error';

/** A QueryFailedError as TypeORM wraps a driver error. */
function queryFailed(driverError: object): QueryFailedError {
  return new QueryFailedError(
    'SELECT 1',
    [],
    Object.assign(new Error('driver error'), driverError),
  );
}

describe('isTransientDatabaseError', () => {
  it.each([
    ['PostgreSQL admin shutdown (pg_terminate_backend)', queryFailed({ code: '57P01' })],
    ['PostgreSQL connection failure class 08', queryFailed({ code: '08006' })],
    ['PostgreSQL serialization failure', queryFailed({ code: '40001' })],
    ['PostgreSQL deadlock', queryFailed({ code: '40P01' })],
    ['PostgreSQL prepared statement gone (DEALLOCATE)', queryFailed({ code: '26000' })],
    ['MariaDB deadlock', queryFailed({ code: 'ER_LOCK_DEADLOCK' })],
    ['a reset socket', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['node-postgres losing its connection', new Error('Connection terminated unexpectedly')],
    ['a released query runner', new QueryRunnerAlreadyReleasedError()],
  ])('is true for %s', (_label, error) => {
    expect(isTransientDatabaseError(error)).toBe(true);
  });

  it.each([
    ['a unique violation', queryFailed({ code: '23505' })],
    ['a syntax error', queryFailed({ code: '42601' })],
    ['an error of user code', new TypeError('cannot read x of undefined')],
    ['a string', 'Connection terminated'],
    ['null', null],
  ])('is false for %s', (_label, error) => {
    expect(isTransientDatabaseError(error)).toBe(false);
  });
});

describe('isLockConflictError', () => {
  it.each([
    ['PostgreSQL deadlock', queryFailed({ code: '40P01' })],
    ['PostgreSQL serialization failure', queryFailed({ code: '40001' })],
    ['MariaDB deadlock', queryFailed({ code: 'ER_LOCK_DEADLOCK' })],
    ['MariaDB lock wait timeout', queryFailed({ code: 'ER_LOCK_WAIT_TIMEOUT' })],
  ])('is true for %s', (_label, error) => {
    expect(isLockConflictError(error)).toBe(true);
  });

  it.each([
    // The commit may have gone through: running a signal() again could store it twice.
    ['PostgreSQL admin shutdown', queryFailed({ code: '57P01' })],
    ['a reset socket', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['node-postgres losing its connection', new Error('Connection terminated unexpectedly')],
    ['a released query runner', new QueryRunnerAlreadyReleasedError()],
    ['a unique violation', queryFailed({ code: '23505' })],
    ['null', null],
  ])('is false for %s', (_label, error) => {
    expect(isLockConflictError(error)).toBe(false);
  });

  it('retryLockConflicts runs again after a deadlock, not after a lost connection', async () => {
    const work = jest
      .fn<Promise<string>, []>()
      .mockRejectedValueOnce(queryFailed({ code: 'ER_LOCK_DEADLOCK' }))
      .mockResolvedValue('done');
    await expect(retryLockConflicts(work, [1])).resolves.toBe('done');
    expect(work).toHaveBeenCalledTimes(2);

    const lost = queryFailed({ code: '57P01' });
    const down = jest.fn<Promise<string>, []>().mockRejectedValue(lost);
    await expect(retryLockConflicts(down, [1, 1])).rejects.toBe(lost);
    expect(down).toHaveBeenCalledTimes(1);
  });
});

describe('retryTransientDatabaseErrors', () => {
  it('runs the work again after each transient failure, then returns its result', async () => {
    const work = jest
      .fn<Promise<string>, []>()
      .mockRejectedValueOnce(queryFailed({ code: '57P01' }))
      .mockRejectedValueOnce(new Error('Connection terminated unexpectedly'))
      .mockResolvedValue('done');
    await expect(retryTransientDatabaseErrors(work, [1, 1, 1])).resolves.toBe('done');
    expect(work).toHaveBeenCalledTimes(3);
  });

  it('throws at once on any other error, and the last error once the delays run out', async () => {
    const unique = queryFailed({ code: '23505' });
    const failing = jest.fn<Promise<string>, []>().mockRejectedValue(unique);
    await expect(retryTransientDatabaseErrors(failing, [1, 1])).rejects.toBe(unique);
    expect(failing).toHaveBeenCalledTimes(1);

    const lost = queryFailed({ code: '57P01' });
    const down = jest.fn<Promise<string>, []>().mockRejectedValue(lost);
    await expect(retryTransientDatabaseErrors(down, [1, 1])).rejects.toBe(lost);
    expect(down).toHaveBeenCalledTimes(3);
  });
});
