import { Module, type DynamicModule } from '@nestjs/common';
import { CliAppHost } from './cli-app.host';
import { CliProgram } from './cli-program';
import { CLI_SETTINGS, type CliSettings } from './cli-settings';
import { CancelCommand } from './commands/cancel.command';
import { DoctorCommand } from './commands/doctor.command';
import { HousekeepingCommand } from './commands/housekeeping.command';
import { ListCommand } from './commands/list.command';
import { PauseCommand } from './commands/pause.command';
import { ResumeAtCommand } from './commands/resume-at.command';
import { ResumeCommand } from './commands/resume.command';
import { ShowCommand } from './commands/show.command';
import { SignalCommand } from './commands/signal.command';
import { SkipCommand } from './commands/skip.command';

/** The `geneva-drive` commands, for nest-commander. */
export const GENEVA_DRIVE_CLI_COMMANDS = [
  ListCommand,
  ShowCommand,
  SignalCommand,
  PauseCommand,
  ResumeCommand,
  SkipCommand,
  CancelCommand,
  ResumeAtCommand,
  HousekeepingCommand,
  DoctorCommand,
];

/**
 * The CLI's own context: the commands and the host that boots the app's module on demand. It
 * holds no connection itself, so help and usage errors cost nothing.
 */
@Module({})
export class GenevaDriveCliModule {
  static register(settings: CliSettings): DynamicModule {
    return {
      module: GenevaDriveCliModule,
      providers: [
        { provide: CLI_SETTINGS, useValue: settings },
        CliAppHost,
        CliProgram,
        ...GENEVA_DRIVE_CLI_COMMANDS,
      ],
    };
  }
}
