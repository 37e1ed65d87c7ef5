import type { MigrationInterface, QueryRunner } from 'typeorm';
import { JSON_COLUMNS } from './migration.constants';
import { ensureJsonText, restoreJsonType } from './schema-guards';

/**
 * MariaDB: turns the library's JSON columns (workflow and execution `metadata`, `cursor`, signal
 * `payload`) from MariaDB's `json` type into LONGTEXT (utf8mb4_bin, as before) with a named
 * table-level `JSON_VALID` check. The stored text does not change. For a `json` column the server
 * marks results as JSON, and mysql2 then decodes them before TypeORM does, so a string payload
 * such as `"123"` read back as the number 123; plain LONGTEXT is decoded once, by TypeORM's `json`
 * column type, whatever mysql2's version or `jsonStrings` setting. Installs made after this
 * migration existed get that storage from the earlier migrations already; this one then does
 * nothing. A no-op on MySQL (LONGTEXT already), PostgreSQL and SQLite.
 *
 * One ALTER TABLE per table, skipped when it is done, so a re-run after a partial failure
 * completes. `down()` restores the `json` type.
 */
export class GenevaDriveMariaDbJsonText1764400004000 implements MigrationInterface {
  name = 'GenevaDriveMariaDbJsonText1764400004000';

  async up(queryRunner: QueryRunner): Promise<void> {
    for (const table of Object.keys(JSON_COLUMNS)) await ensureJsonText(queryRunner, table);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of Object.keys(JSON_COLUMNS)) await restoreJsonType(queryRunner, table);
  }
}
