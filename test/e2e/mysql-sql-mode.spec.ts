import { Test } from '@nestjs/testing';
import { TypeOrmModule, type TypeOrmModuleOptions } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { GenevaDriveModule, ModuleOptionsError } from '../../lib';
import { createSchema, dataSourceOptions, dropSchema } from './support/database';
import { describeOn } from './support/describe-if';

/**
 * Boots the module on a MariaDB DataSource whose only pooled connection runs `sessionSql` first
 * (a pool of one, so the session setting is the one every library query sees), and resolves what
 * `app.init()` rejected with, or null. The session is changed through @nestjs/typeorm's public
 * `dataSourceFactory`, never globally: other test files share this server.
 */
async function bootError(schema: string, sessionSql: string | null): Promise<Error | null> {
  let source: DataSource | null = null;
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRootAsync({
        useFactory: (): TypeOrmModuleOptions => ({
          ...dataSourceOptions(schema),
          extra: { connectionLimit: 1 },
          retryAttempts: 0,
        }),
        dataSourceFactory: async (options) => {
          source = await new DataSource(options!).initialize();
          if (sessionSql) await source.query(sessionSql);
          return source;
        },
      }),
      GenevaDriveModule.forRoot({ worker: false, housekeeping: { enabled: false } }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  try {
    await app.init();
    return null;
  } catch (error) {
    return error as Error;
  } finally {
    await app.close();
    const opened = source as DataSource | null;
    if (opened?.isInitialized) await opened.destroy();
  }
}

// sql_mode and NO_BACKSLASH_ESCAPES exist on MariaDB/MySQL only: PostgreSQL and SQLite bind values
// in the protocol (or the SQLite API), so nothing there decides where a string ends.
describeOn('mariadb')('MariaDB boot check: sql_mode must not contain NO_BACKSLASH_ESCAPES', () => {
  let schema: string;
  beforeAll(async () => (schema = await createSchema('gd_sql_mode')));
  afterAll(() => dropSchema(schema));

  it('fails app.init() with ModuleOptionsError naming the setting, why and the fix', async () => {
    const error = await bootError(
      schema,
      "SET SESSION sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'NO_BACKSLASH_ESCAPES')",
    );
    expect(error).toBeInstanceOf(ModuleOptionsError);
    expect(error?.message).toMatch(
      /runs with sql_mode '[^']*NO_BACKSLASH_ESCAPES[^']*', which contains NO_BACKSLASH_ESCAPES/,
    );
    expect(error?.message).toContain(
      "TypeORM's mysql2 driver formats bound values into the SQL text on the client",
    );
    expect(error?.message).toContain('a quote inside a value ends the string');
    expect(error?.message).toMatch(
      /Remove NO_BACKSLASH_ESCAPES from the sql_mode of this data source's connections, e\.g\. sql_mode = '(?![^']*NO_BACKSLASH_ESCAPES)[^']*'/,
    );
  });

  it('boots the same setup without it (the pool of one and the factory are not what fails)', async () => {
    await expect(bootError(schema, null)).resolves.toBeNull();
    await expect(
      bootError(schema, "SET SESSION sql_mode = 'STRICT_TRANS_TABLES,ANSI_QUOTES'"),
    ).resolves.toBeNull();
  });
});
