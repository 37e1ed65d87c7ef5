import {
  Inject,
  Injectable,
  type INestApplicationContext,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { GenevaDriveHealthProbe } from '../health/geneva-drive-health.probe';
import { HousekeepingService } from '../housekeeping/housekeeping.service';
import { WORKER_ENV_VARIABLE } from '../options/resolve-module-options';
import type { ResolvedGenevaDriveOptions } from '../options/resolved-options.interface';
import { GENEVA_DRIVE_RESOLVED_OPTIONS } from '../options/resolved-options.token';
import { WorkflowRepository } from '../ports/workflow.repository';
import { WorkflowService } from '../service/workflow.service';
import { loadAppModule, type GenevaDriveCliApp } from './app-module.loader';
import { parseAppReference } from './app-reference';
import { CliAppLogger } from './cli-app.logger';
import { CliConnectionError } from './cli-connection.error';
import { CLI_SETTINGS, type CliSettings } from './cli-settings';
import { CliUsageError } from './cli-usage.error';
import { isConnectionError } from './exit-code-of';

/** What the commands use of the booted app. */
export interface CliServices {
  workflows: WorkflowService;
  housekeeping: HousekeepingService;
  probe: GenevaDriveHealthProbe;
  repository: WorkflowRepository;
  options: ResolvedGenevaDriveOptions;
}

/**
 * Boots the app's module as an application context, once, when a command first needs it (so
 * `--help` and usage errors need no database), with `GENEVA_DRIVE_WORKER=off`: the CLI never
 * consumes step jobs. Closed when the CLI's own context closes.
 */
@Injectable()
export class CliAppHost implements OnApplicationShutdown {
  private app: INestApplicationContext | null = null;
  private opening: Promise<CliServices> | null = null;

  constructor(@Inject(CLI_SETTINGS) private readonly settings: CliSettings) {}

  services(): Promise<CliServices> {
    return (this.opening ??= this.open());
  }

  async onApplicationShutdown(): Promise<void> {
    const app = this.app;
    this.app = null;
    await app?.close();
  }

  private async open(): Promise<CliServices> {
    const previous = process.env[WORKER_ENV_VARIABLE];
    process.env[WORKER_ENV_VARIABLE] = 'off';
    try {
      this.app = await NestFactory.createApplicationContext(this.module(), {
        logger: new CliAppLogger(this.settings.output),
        abortOnError: false,
      });
    } catch (error) {
      if (!isConnectionError(error)) throw error;
      throw new CliConnectionError(
        `the app could not connect while booting: ${messageOf(error)}. Check that the database and Redis named in its configuration are running and reachable from here.`,
        { cause: error },
      );
    } finally {
      if (previous === undefined) delete process.env[WORKER_ENV_VARIABLE];
      else process.env[WORKER_ENV_VARIABLE] = previous;
    }
    return this.resolveServices(this.app);
  }

  private module(): GenevaDriveCliApp {
    const { app, cwd } = this.settings;
    if (app === null) {
      throw new CliUsageError(
        'no app to run against: pass --app <file>#<export>, the compiled file of the Nest module that imports GenevaDriveModule (e.g. --app dist/app.module.js#AppModule).',
      );
    }
    return typeof app === 'string' ? loadAppModule(parseAppReference(app), cwd) : app;
  }

  private resolveServices(app: INestApplicationContext): CliServices {
    try {
      return {
        workflows: app.get(WorkflowService, { strict: false }),
        housekeeping: app.get(HousekeepingService, { strict: false }),
        probe: app.get(GenevaDriveHealthProbe, { strict: false }),
        repository: app.get(WorkflowRepository, { strict: false }),
        options: app.get<ResolvedGenevaDriveOptions>(GENEVA_DRIVE_RESOLVED_OPTIONS, {
          strict: false,
        }),
      };
    } catch (error) {
      throw new CliUsageError(
        `the app's module does not provide GenevaDriveModule (${messageOf(error)}): point --app at the module that imports GenevaDriveModule.forRoot() or forRootAsync().`,
        { cause: error },
      );
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
