#!/usr/bin/env node
// The `geneva-drive` binary (package.json "bin"): `geneva-drive --app <file>#<export> <command>`.
import 'reflect-metadata';
import { runGenevaDriveCli } from './run-geneva-drive-cli';

runGenevaDriveCli(process.argv.slice(2)).then(
  // Exit at once: a client the app left open (a Redis reconnecting) must not hold the shell.
  (exitCode) => process.exit(exitCode),
  (error: unknown) => {
    process.stderr.write(
      `geneva-drive: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
