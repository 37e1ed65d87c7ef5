import { Injectable } from '@nestjs/common';
import { WorkflowEntity } from '../../entities/workflow.entity';
import { sqliteDatabaseFile } from './async-mutex';
import { GenevaDriveDataSource } from './geneva-drive-data-source';

/** SQLite database files whose housekeeping runs in this process right now. */
const runningOnSqliteFiles = new Set<string>();

/** First half of the PostgreSQL advisory lock key: "GDHK" as a 32-bit integer. */
const POSTGRES_LOCK_CLASS = 0x4744484b;

/**
 * The database-wide lock every housekeeping run takes first, so a cluster does one run per tick.
 * The key is per schema (per database on MariaDB/MySQL), so deployments sharing a database in
 * different schemas do not block each other.
 *
 * - PostgreSQL: a transaction-scoped advisory lock (`pg_try_advisory_xact_lock`) taken in a
 *   transaction of its own, on a dedicated connection, which stays open for the whole run and
 *   commits at its end: the commit is the release. It works behind a transaction-mode pooler
 *   (PgBouncer), which lends a server connection for a whole transaction, and it cannot leak: a
 *   session lock there can be taken and released on two different server connections and stays
 *   on a pooled one (SPEC §16.1). The run itself works on other connections. Session and
 *   transaction advisory locks share one key space, so it also excludes a run of an earlier
 *   version holding the session lock on the same key. The server's
 *   `idle_in_transaction_session_timeout` (and PgBouncer's `idle_transaction_timeout`) must be
 *   longer than a run, or the lock's connection is closed mid-run and the commit fails.
 * - MySQL/MariaDB: `GET_LOCK`, which is session-level: held on one dedicated connection and
 *   released on that same connection. Fine on a direct connection and through ProxySQL (a
 *   connection that ran GET_LOCK is never multiplexed again); a pooler that multiplexes sessions
 *   regardless would defeat it.
 * - SQLite (one process, one connection): an in-process flag per database file.
 */
@Injectable()
export class HousekeepingLock {
  private heldInProcess = false;

  constructor(private readonly database: GenevaDriveDataSource) {}

  /** Runs `work` under the lock; resolves `null` without running it when another run holds it. */
  async tryWithLock<T>(work: () => Promise<T>): Promise<T | null> {
    switch (this.database.family) {
      case 'sqlite':
        return this.withProcessFlag(work);
      case 'mysql':
        return this.withSessionLock(work);
      case 'postgres':
        return this.withTransactionLock(work);
    }
  }

  /** PostgreSQL: held by an open transaction of its own; its commit releases it. */
  private async withTransactionLock<T>(work: () => Promise<T>): Promise<T | null> {
    const metadata = this.database.dataSource.getMetadata(WorkflowEntity);
    const runner = this.database.dataSource.createQueryRunner();
    try {
      await runner.connect();
      await runner.startTransaction('READ COMMITTED');
      let held: boolean;
      try {
        const rows = (await runner.query(
          `SELECT pg_try_advisory_xact_lock($1::int, hashtext(coalesce($2::text, current_schema()) || '.' || $3::text)) AS locked`,
          [POSTGRES_LOCK_CLASS, metadata.schema ?? null, metadata.tableName],
        )) as Array<{ locked: unknown }>;
        held = isTrue(rows[0]?.locked);
      } catch (error) {
        // Never hand an aborted transaction back to the pool; the lock statement's error is the
        // one worth reporting, not the rollback's on a connection that may be gone.
        await runner.rollbackTransaction().catch(() => undefined);
        throw error;
      }
      if (!held) {
        await runner.rollbackTransaction();
        return null;
      }
      try {
        return await work();
      } finally {
        // The transaction wrote nothing; its commit releases the lock, whatever `work` did. A
        // failed commit (the connection closed mid-run, so the lock was lost) is the run's error.
        await runner.commitTransaction();
      }
    } finally {
      await runner.release();
    }
  }

  /** MySQL/MariaDB: a session lock, taken and released on one dedicated connection. */
  private async withSessionLock<T>(work: () => Promise<T>): Promise<T | null> {
    const metadata = this.database.dataSource.getMetadata(WorkflowEntity);
    // Per database (MySQL has no schemas inside one); GET_LOCK names are limited to 64 characters.
    const database =
      metadata.database ?? (this.database.dataSource.options.database as string | undefined) ?? '';
    const params = [`geneva_drive_housekeeping:${database}`.slice(0, 64)];
    const runner = this.database.dataSource.createQueryRunner();
    try {
      await runner.connect();
      const rows = (await runner.query(`SELECT GET_LOCK(?, 0) AS locked`, params)) as Array<{
        locked: unknown;
      }>;
      if (!isTrue(rows[0]?.locked)) return null;
      try {
        return await work();
      } finally {
        await runner.query(`SELECT RELEASE_LOCK(?) AS released`, params);
      }
    } finally {
      await runner.release();
    }
  }

  private async withProcessFlag<T>(work: () => Promise<T>): Promise<T | null> {
    // Per database file, so two app instances on one file in this process do one run at a time.
    const file = sqliteDatabaseFile(this.database.dataSource);
    if (file === null ? this.heldInProcess : runningOnSqliteFiles.has(file)) return null;
    if (file === null) this.heldInProcess = true;
    else runningOnSqliteFiles.add(file);
    try {
      return await work();
    } finally {
      if (file === null) this.heldInProcess = false;
      else runningOnSqliteFiles.delete(file);
    }
  }
}

function isTrue(value: unknown): boolean {
  return value === true || value === 1 || value === '1' || value === 't';
}
