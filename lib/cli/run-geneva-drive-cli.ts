import { CommandFactory, CommandRunnerService } from 'nest-commander';
import type { GenevaDriveCliApp } from './app-module.loader';
import { CliExitCode } from './cli-exit-code';
import { CliOutcome, CliOutput, type CliStreams } from './cli-output';
import { exitCodeOf } from './exit-code-of';
import { GenevaDriveCliModule } from './geneva-drive-cli.module';
import { splitGlobalOptions } from './global-options';

/** How `runGenevaDriveCli()` runs; every field has a default for the `geneva-drive` binary. */
export interface GenevaDriveCliOptions {
  /**
   * The module to boot (a Nest module class or a dynamic module that imports GenevaDriveModule),
   * for a script of your own that embeds the CLI; `--app` then need not be given. Default: the
   * module `--app <file>#<export>` names.
   */
  app?: GenevaDriveCliApp;
  /** The directory `--app` is relative to. Default: `process.cwd()`. */
  cwd?: string;
  /** Where results and messages go. Default: `process.stdout` and `process.stderr`. */
  streams?: CliStreams;
}

/**
 * Runs one `geneva-drive` command line (`argv` without the node and script paths) and resolves its
 * exit code (`CliExitCode`); never exits the process. The app's module is booted as an
 * application context with `GENEVA_DRIVE_WORKER=off`, once a command needs it, and closed before
 * this resolves.
 */
export async function runGenevaDriveCli(
  argv: readonly string[],
  options: GenevaDriveCliOptions = {},
): Promise<CliExitCode> {
  const streams = options.streams ?? { stdout: process.stdout, stderr: process.stderr };
  const outcome = new CliOutcome();
  let output = new CliOutput(argv.includes('--json'), streams);
  let global;
  try {
    global = splitGlobalOptions(argv);
  } catch (error) {
    output.failure(error, CliExitCode.usage);
    return CliExitCode.usage;
  }
  output = new CliOutput(global.json, streams);
  const cli = await CommandFactory.createWithoutRunning(
    GenevaDriveCliModule.register({
      app: options.app ?? global.app,
      cwd: options.cwd ?? process.cwd(),
      output,
      outcome,
    }),
    {
      logger: false,
      cliName: 'geneva-drive',
      // commander throws instead of exiting the process; the error is handled below.
      errorHandler: (error) => {
        throw error;
      },
      serviceErrorHandler: (error) => {
        outcome.exitCode = exitCodeOf(error);
        // commander printed its usage errors and help itself.
        if (outcome.exitCode !== CliExitCode.done)
          output.failure(error, outcome.exitCode, isCommanderError(error));
      },
      outputConfiguration: {
        writeOut: (text) => output.writeOut(text),
        writeErr: (text) => output.writeErr(text),
      },
    },
  );
  try {
    await cli.get(CommandRunnerService).run(['node', 'geneva-drive', ...global.args]);
  } finally {
    await cli.close();
  }
  return outcome.exitCode;
}

function isCommanderError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('commander.');
}
