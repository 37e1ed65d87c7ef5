import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import {
  GENEVA_DRIVE_MIGRATIONS,
  GenevaDriveMariaDbJsonText1764400004000,
  GenevaDriveModule,
  MissingMigrationError,
  ModuleOptionsError,
} from '../../lib';
import { GenevaDriveTestingModule } from '../../lib/testing';
import { ScriptedWorkflow } from '../fixtures/scripted.workflows';
import { StepScript } from '../fixtures/step-script';
import {
  createSchema,
  dataSourceOptions,
  dropSchema,
  testDatabase,
  testDatabaseLabel,
} from './support/database';

/** Boots the module on `schema` with `migrations`; resolves the error app.init() threw, or null. */
async function bootError(
  schema: string,
  migrations: DataSourceOptions['migrations'],
  withTestingModule = false,
): Promise<Error | null> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({
        ...dataSourceOptions(schema, [], migrations),
        synchronize: false,
        retryAttempts: 0,
      }),
      GenevaDriveModule.forRoot({ worker: false, housekeeping: { enabled: false } }),
      ...(withTestingModule ? [GenevaDriveTestingModule.forRoot()] : []),
    ],
    providers: [ScriptedWorkflow, StepScript],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  try {
    await app.init();
    return null;
  } catch (error) {
    return error as Error;
  } finally {
    await app.close();
  }
}

/**
 * What boot refuses. The library's migrations not run: `app.init()` fails naming what to run, instead of the first
 * `start()` failing with the driver's "relation does not exist" / "no such table". The optional
 * migrations (resumable steps, signals) still degrade gracefully (graceful-degradation.spec.ts).
 * The real module and the testing module imported together: the real one would still connect to
 * Redis and one set of services would silently win.
 */
describe(`boot checks (${testDatabaseLabel})`, () => {
  const schemas: string[] = [];
  const freshSchema = async () => {
    const schema = await createSchema('gd_boot');
    schemas.push(schema);
    return schema;
  };
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });

  it('without the base migration, app.init() fails with MissingMigrationError naming GENEVA_DRIVE_MIGRATIONS', async () => {
    const error = await bootError(await freshSchema(), []);
    expect(error).toBeInstanceOf(MissingMigrationError);
    expect(error?.message).toMatch(/geneva_drive_workflows.*do not exist/);
    expect(error?.message).toContain('GENEVA_DRIVE_MIGRATIONS');
    expect(error?.message).toContain('migrationsRun: true');
  });

  it('with only the base migration, app.init() succeeds (the optional ones degrade gracefully)', async () => {
    const schema = await freshSchema();
    await expect(bootError(schema, GENEVA_DRIVE_MIGRATIONS.slice(0, 1))).resolves.toBeNull();
  });

  // An install migrated before the JSON columns became text: mysql2 would decode their values before
  // TypeORM does ("123" read back as 123), so boot refuses until the migration has run.
  (testDatabase === 'mariadb' ? it : it.skip)(
    "MariaDB: with the JSON columns still of MariaDB's json type, app.init() fails with MissingMigrationError naming the migration",
    async () => {
      const schema = await freshSchema();
      const ds = await new DataSource({
        ...dataSourceOptions(schema),
        synchronize: false,
      }).initialize();
      const runner = ds.createQueryRunner();
      try {
        await new GenevaDriveMariaDbJsonText1764400004000().down(runner);
      } finally {
        await runner.release();
        await ds.destroy();
      }
      const error = await bootError(schema, []);
      expect(error).toBeInstanceOf(MissingMigrationError);
      expect(error?.message).toMatch(
        /geneva_drive_signals\.payload.*still have MariaDB's json type/,
      );
      expect(error?.message).toContain('GenevaDriveMariaDbJsonText1764400004000');
    },
  );

  it('GenevaDriveModule imported together with GenevaDriveTestingModule: app.init() fails with ModuleOptionsError', async () => {
    const error = await bootError(await freshSchema(), GENEVA_DRIVE_MIGRATIONS, true);
    expect(error).toBeInstanceOf(ModuleOptionsError);
    expect(error?.message).toContain(
      'GenevaDriveModule and GenevaDriveTestingModule are both imported',
    );
    expect(error?.message).toContain('import only GenevaDriveTestingModule.forRoot() in the test');
  });
});
