import type { GenevaDriveCliApp } from './app-module.loader';
import type { CliOutcome, CliOutput } from './cli-output';

/** What a `geneva-drive` run was given. */
export interface CliSettings {
  /** The module to boot, or its `--app <file>#<export>` reference; null when neither was given. */
  app: GenevaDriveCliApp | string | null;
  /** The directory `--app` is relative to. */
  cwd: string;
  output: CliOutput;
  outcome: CliOutcome;
}

/** DI token of the run's `CliSettings`. */
export const CLI_SETTINGS = Symbol('GENEVA_DRIVE_CLI_SETTINGS');
