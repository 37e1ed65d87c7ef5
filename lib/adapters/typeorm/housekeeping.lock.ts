import { Injectable } from '@nestjs/common';
import { WorkflowEntity } from '../../entities/workflow.entity';
import { sqliteDatabaseFile } from './async-mutex';
import { GenevaDriveDataSource } from './geneva-drive-data-source';

/** SQLite database files whose housekeeping runs in this process right now. */
const runningOnSqliteFiles = new Set<string>();

/** First half of the PostgreSQL advisory lock key: "GDHK" as a 32-bit integer. */
const POSTGRES_LOCK_CLASS = 0x4744484b;

/**
 * The database-wide lock every housekeeping run takes first, so a cluster does one run per tick:
 * a session-level PostgreSQL advisory lock (`pg_try_advisory_lock`) or MySQL/MariaDB `GET_LOCK`,
 * held on one dedicated connection and released on that same connection; on SQLite (one process,
 * one connection) an in-process flag per database file. The key is per schema (per database on
 * MariaDB/MySQL), so deployments sharing a database in different schemas do not block each other.
 */
@Injectable()
export class HousekeepingLock {
  private heldInProcess = false;

  constructor(private readonly database: GenevaDriveDataSource) {}

  /** Runs `work` under the lock; resolves `null` without running it when another run holds it. */
  async tryWithLock<T>(work: () => Promise<T>): Promise<T | null> {
    if (this.database.family === 'sqlite') return this.withProcessFlag(work);
    const runner = this.database.dataSource.createQueryRunner();
    try {
      await runner.connect();
      const { acquire, release, params } = this.statements();
      const rows = (await runner.query(acquire, params)) as Array<{ locked: unknown }>;
      if (!isTrue(rows[0]?.locked)) return null;
      try {
        return await work();
      } finally {
        await runner.query(release, params);
      }
    } finally {
      await runner.release();
    }
  }

  private statements(): { acquire: string; release: string; params: unknown[] } {
    const metadata = this.database.dataSource.getMetadata(WorkflowEntity);
    const schema = metadata.schema ?? null;
    if (this.database.family === 'mysql') {
      // Per database (MySQL has no schemas inside one); GET_LOCK names are limited to 64 characters.
      const database = metadata.database ?? (this.database.dataSource.options.database as string | undefined) ?? '';
      const name = `geneva_drive_housekeeping:${database}`.slice(0, 64);
      return {
        acquire: `SELECT GET_LOCK(?, 0) AS locked`,
        release: `SELECT RELEASE_LOCK(?) AS released`,
        params: [name],
      };
    }
    const key = `hashtext(coalesce($2::text, current_schema()) || '.' || $3::text)`;
    return {
      acquire: `SELECT pg_try_advisory_lock($1::int, ${key}) AS locked`,
      release: `SELECT pg_advisory_unlock($1::int, ${key}) AS released`,
      params: [POSTGRES_LOCK_CLASS, schema, metadata.tableName],
    };
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
