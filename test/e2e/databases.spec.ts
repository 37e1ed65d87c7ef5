import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DataSourceOptions } from 'typeorm';
import { GenevaDriveModule } from '../../lib';
import { createSchema, dataSourceOptions, dropSchema } from './support/database';
import { describeOn } from './support/describe-if';

/** Boots the module on a MariaDB DataSource and resolves what it logged as warnings. */
async function bootWarnings(options: DataSourceOptions): Promise<string[]> {
  const warnings: string[] = [];
  const moduleRef = await Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({ ...options, retryAttempts: 0 }),
      GenevaDriveModule.forRoot({
        worker: false,
        housekeeping: { enabled: false },
        logger: {
          log: () => undefined,
          error: () => undefined,
          warn: (message: unknown) => void warnings.push(String(message)),
        },
      }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  try {
    await app.init();
  } finally {
    await app.close();
  }
  return warnings;
}

// The time zone check concerns mysql2 only.
describeOn('mariadb')('MariaDB data source checks at boot', () => {
  let schema: string;
  beforeAll(async () => (schema = await createSchema('gd_boot')));
  afterAll(() => dropSchema(schema));

  it("warns when the DataSource does not set timezone: 'Z', and not when it does", async () => {
    const { timezone: _utc, ...local } = dataSourceOptions(schema) as DataSourceOptions & {
      timezone?: string;
    };
    const warned = await bootWarnings(local);
    expect(warned).toEqual([expect.stringContaining("does not set timezone: 'Z'")]);
    expect(await bootWarnings(dataSourceOptions(schema))).toEqual([]);
  });
});
