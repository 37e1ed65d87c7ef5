/**
 * The exit codes of `geneva-drive`: 0 done; 1 refused (a workflow in the wrong state, an unknown
 * id, a failed doctor check); 2 usage (bad arguments, an `--app` that does not load, module
 * options the CLI cannot run with, such as `transport: 'local'`); 3 cannot connect (the database
 * or the transport did not answer).
 */
export const CliExitCode = {
  done: 0,
  refused: 1,
  usage: 2,
  cannotConnect: 3,
} as const;

/** One of the `CliExitCode` values. */
export type CliExitCode = (typeof CliExitCode)[keyof typeof CliExitCode];
