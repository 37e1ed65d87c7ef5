import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectCommander, type CommandRunner } from 'nest-commander';

type CommanderCommand = Parameters<CommandRunner['setCommand']>[0];

const EXIT_CODES_HELP = `
Exit codes:
  0  done
  1  refused (the workflow's state does not allow it, an unknown id, a failed doctor check)
  2  usage (bad arguments, an --app that does not load, options the CLI cannot run with)
  3  cannot connect (the database or Redis did not answer)`;

/**
 * The root command's name and help: the global options (taken off the command line before
 * commander parses it, global-options.ts) and the exit codes.
 */
@Injectable()
export class CliProgram implements OnModuleInit {
  constructor(@InjectCommander() private readonly program: CommanderCommand) {}

  onModuleInit(): void {
    this.program
      .name('geneva-drive')
      .description('Operate nestjs-geneva-drive workflows from the command line.')
      .option(
        '--app <file#export>',
        "the app's compiled Nest module that imports GenevaDriveModule (booted with the worker off)",
      )
      .option('--json', 'print one JSON document on stdout')
      .addHelpText('after', EXIT_CODES_HELP);
  }
}
