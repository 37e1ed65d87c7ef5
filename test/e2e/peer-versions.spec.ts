import { randomBytes } from 'node:crypto';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  GENEVA_DRIVE_ENTITIES,
  GENEVA_DRIVE_MIGRATIONS,
  GenevaDriveModule,
  ModuleOptionsError,
  WorkflowService,
} from 'nestjs-geneva-drive';
import { GenevaDriveTestingModule } from 'nestjs-geneva-drive/testing';
import {
  INSTALLED_VERSION_READER,
  readInstalledVersion,
  type InstalledVersionReader,
} from '../../lib/compatibility/installed-version.reader';
import { createSchema, dataSourceOptions, dropSchema } from './support/database';

/** The installed packages, but TypeORM reported at `typeorm` (the other peers as installed). */
const typeormAt =
  (typeorm: string): InstalledVersionReader =>
  (name) =>
    name === 'typeorm' ? typeorm : readInstalledVersion(name);

const UNSUPPORTED_TYPEORM =
  'nestjs-geneva-drive does not support the installed typeorm 0.2.45 (supported: ^0.3.20 || ^1). ' +
  'Install a supported version: npm install typeorm@^0.3.20';

/** `app.init()`'s rejection (null when it boots); the app is closed either way. */
async function initError(app: INestApplication): Promise<unknown> {
  try {
    return await app.init().then(
      () => null,
      (thrown: unknown) => thrown,
    );
  } finally {
    await app.close();
  }
}

describe('peer package versions, checked at boot', () => {
  describe('GenevaDriveModule', () => {
    let schema: string;

    beforeAll(async () => {
      schema = await createSchema('gd_versions');
    });

    afterAll(() => dropSchema(schema));

    async function compile(
      read: InstalledVersionReader,
      housekeeping = { enabled: false },
    ): Promise<INestApplication> {
      const moduleRef = await Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot({ ...dataSourceOptions(schema), retryAttempts: 0 }),
          GenevaDriveModule.forRoot({
            prefix: `gd-versions-${randomBytes(4).toString('hex')}`,
            worker: false,
            housekeeping,
          }),
        ],
      })
        .overrideProvider(INSTALLED_VERSION_READER)
        .useValue(read)
        .compile();
      return moduleRef.createNestApplication({ logger: false });
    }

    it('an unsupported TypeORM fails app.init() with ModuleOptionsError naming it, its version, the range and the fix', async () => {
      const error = await initError(await compile(typeormAt('0.2.45')));
      expect(error).toBeInstanceOf(ModuleOptionsError);
      expect((error as Error).message).toBe(
        `${UNSUPPORTED_TYPEORM} (or set allowUnsupportedVersions: true to boot anyway, untested).`,
      );
    });

    it("is reported before the library's other boot checks", async () => {
      // Housekeeping enabled without ScheduleModule fails boot too (its own ModuleOptionsError).
      const error = await initError(await compile(typeormAt('0.2.45'), { enabled: true }));
      expect((error as Error).message).toContain(UNSUPPORTED_TYPEORM);
    });

    it('boots with the installed versions', async () => {
      expect(await initError(await compile(readInstalledVersion))).toBeNull();
    });
  });

  describe('GenevaDriveTestingModule', () => {
    async function compile(
      read: InstalledVersionReader,
      options?: Parameters<typeof GenevaDriveTestingModule.forRoot>[0],
    ): Promise<INestApplication> {
      const moduleRef = await Test.createTestingModule({
        imports: [
          TypeOrmModule.forRoot({
            type: 'better-sqlite3',
            database: ':memory:',
            entities: [...GENEVA_DRIVE_ENTITIES],
            migrations: [...GENEVA_DRIVE_MIGRATIONS],
            migrationsRun: true,
          }),
          GenevaDriveTestingModule.forRoot(options),
        ],
      })
        .overrideProvider(INSTALLED_VERSION_READER)
        .useValue(read)
        .compile();
      return moduleRef.createNestApplication({ logger: false });
    }

    it('an unsupported TypeORM fails app.init() the same way', async () => {
      const error = await initError(await compile(typeormAt('0.2.45')));
      expect(error).toBeInstanceOf(ModuleOptionsError);
      expect((error as Error).message).toContain(UNSUPPORTED_TYPEORM);
    });

    it('allowUnsupportedVersions: true boots and logs the same message as a warning', async () => {
      const warnings: string[] = [];
      const logger: LoggerService = {
        log: () => undefined,
        error: () => undefined,
        warn: (message: string) => void warnings.push(message),
      };
      const app = await compile(typeormAt('0.2.45'), { allowUnsupportedVersions: true, logger });
      try {
        await app.init();
        expect(app.get(WorkflowService)).toBeInstanceOf(WorkflowService);
      } finally {
        await app.close();
      }
      expect(warnings).toEqual([
        `${UNSUPPORTED_TYPEORM} (booting anyway: allowUnsupportedVersions is set).`,
      ]);
    });
  });
});
