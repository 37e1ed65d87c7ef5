import { resolve } from 'node:path';
import type { DataSource } from 'typeorm';

/** A FIFO mutex: SQLite has one connection, so the library serializes its own transactions. */
export class AsyncMutex {
  private tail: Promise<void> = Promise.resolve();

  async runExclusive<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    await previous;
    try {
      return await fn();
    } finally {
      release();
    }
  }
}

const mutexByFile = new Map<string, AsyncMutex>();

/** The absolute path of a SQLite DataSource's database file; null for an in-memory database. */
export function sqliteDatabaseFile(dataSource: DataSource): string | null {
  const database = (dataSource.options as { database?: unknown }).database;
  if (
    typeof database !== 'string' ||
    database === '' ||
    database === ':memory:' ||
    database.startsWith('file::memory:')
  ) {
    return null;
  }
  return resolve(database);
}

/**
 * The mutex for a SQLite DataSource: one per database file in this process, so two DataSources on
 * the same file (two app instances in one process, a migration runner beside the app) take turns
 * too instead of meeting as SQLITE_BUSY; a private one for an in-memory database.
 */
export function sqliteMutexFor(dataSource: DataSource): AsyncMutex {
  const key = sqliteDatabaseFile(dataSource);
  if (key === null) return new AsyncMutex();
  let mutex = mutexByFile.get(key);
  if (!mutex) {
    mutex = new AsyncMutex();
    mutexByFile.set(key, mutex);
  }
  return mutex;
}
