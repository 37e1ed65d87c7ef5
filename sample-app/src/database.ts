import { DataSource } from 'typeorm';

/**
 * Creates the app's schema before the real DataSource connects. TypeORM's `schema` option says
 * where the tables live (the migrations table and the library's tables included) but nothing
 * creates the schema itself when migrations run, so this short-lived connection does it first,
 * idempotently. (A plain TypeORM DataSource is used rather than `pg`'s Client because `pg` ships
 * no type declarations and `@types/pg` is not installed.)
 */
export async function ensureSchema(databaseUrl: string, schema: string): Promise<void> {
  const admin = new DataSource({ type: 'postgres', url: databaseUrl });
  await admin.initialize();
  try {
    await admin.query(`CREATE SCHEMA IF NOT EXISTS ${admin.driver.escape(schema)}`);
  } finally {
    await admin.destroy();
  }
}

/** Drops a schema and everything in it (used by the e2e test's cleanup). */
export async function dropSchema(databaseUrl: string, schema: string): Promise<void> {
  const admin = new DataSource({ type: 'postgres', url: databaseUrl });
  await admin.initialize();
  try {
    await admin.query(`DROP SCHEMA IF EXISTS ${admin.driver.escape(schema)} CASCADE`);
  } finally {
    await admin.destroy();
  }
}
