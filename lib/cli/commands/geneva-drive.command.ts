import { Inject, Injectable } from '@nestjs/common';
import { CommandRunner } from 'nest-commander';
import { CliAppHost } from '../cli-app.host';
import type { CliExitCode } from '../cli-exit-code';
import { CLI_SETTINGS, type CliSettings } from '../cli-settings';
import { exitCodeOf } from '../exit-code-of';

/** commander's `Command`, as nest-commander hands it over. */
type CommanderCommand = Parameters<CommandRunner['setCommand']>[0];

/**
 * What every `geneva-drive` command shares: the booted app (`host`), the output, and one place
 * that turns a thrown error into its message and exit code.
 */
@Injectable()
export abstract class GenevaDriveCommand extends CommandRunner {
  constructor(
    protected readonly host: CliAppHost,
    @Inject(CLI_SETTINGS) private readonly settings: CliSettings,
  ) {
    super();
  }

  protected get output() {
    return this.settings.output;
  }

  /** commander exits the process on a usage error unless told to throw (nest-commander tells only the root). */
  override setCommand(command: CommanderCommand): this {
    command.exitOverride();
    return super.setCommand(command);
  }

  async run(params: string[], options?: Record<string, unknown>): Promise<void> {
    try {
      this.settings.outcome.exitCode = await this.execute(params, options ?? {});
    } catch (error) {
      const exitCode = exitCodeOf(error);
      this.output.failure(error, exitCode);
      this.settings.outcome.exitCode = exitCode;
    }
  }

  /** Runs the command; resolves its exit code. */
  protected abstract execute(
    params: string[],
    options: Record<string, unknown>,
  ): Promise<CliExitCode>;
}
