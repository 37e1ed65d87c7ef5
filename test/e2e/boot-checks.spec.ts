import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DataSourceOptions } from 'typeorm';
import { GENEVA_DRIVE_MIGRATIONS, GenevaDriveModule, MissingMigrationError } from '../../lib';
import { ScriptedWorkflow } from '../fixtures/scripted.workflows';
import { StepScript } from '../fixtures/step-script';
import { createSchema, dataSourceOptions, dropSchema, testDatabaseLabel } from './support/database';

/** Boots the module on `schema` with `migrations`; resolves the error app.init() threw, or null. */
async function bootError(
  schema: string,
  migrations: DataSourceOptions['migrations'],
): Promise<Error | null> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({
        ...dataSourceOptions(schema, [], migrations),
        synchronize: false,
        retryAttempts: 0,
      }),
      GenevaDriveModule.forRoot({ worker: false, housekeeping: { enabled: false } }),
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
 * The library's migrations not run: `app.init()` fails naming what to run, instead of the first
 * `start()` failing with the driver's "relation does not exist" / "no such table". The optional
 * migrations (resumable steps, signals) still degrade gracefully (graceful-degradation.spec.ts).
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
});
