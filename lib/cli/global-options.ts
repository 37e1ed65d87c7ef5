import { CliUsageError } from './cli-usage.error';

/** The options every `geneva-drive` command takes, wherever they stand on the command line. */
export interface GlobalOptions {
  /** `--app <file>#<export>`: the module to boot; null when not given. */
  app: string | null;
  /** `--json`: one JSON document on stdout instead of tables. */
  json: boolean;
  /** The rest of the command line, for the command. */
  args: string[];
}

/**
 * Takes `--app <ref>` (or `--app=<ref>`) and `--json` out of the command line, before or after the
 * command's name (up to a `--`), so each command need not declare them.
 */
export function splitGlobalOptions(argv: readonly string[]): GlobalOptions {
  const options: GlobalOptions = { app: null, json: false, args: [] };
  const setApp = (value: string | undefined) => {
    if (value === undefined || value === '' || value.startsWith('-')) {
      throw new CliUsageError(
        '--app needs a value: --app <file>#<export>, e.g. --app dist/app.module.js#AppModule.',
      );
    }
    if (options.app !== null) throw new CliUsageError('--app is given twice: pass it once.');
    options.app = value;
  };
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
    if (arg === '--') {
      options.args.push(...argv.slice(index));
      break;
    }
    if (arg === '--json') options.json = true;
    else if (arg === '--app') setApp(argv[++index]);
    else if (arg.startsWith('--app=')) setApp(arg.slice('--app='.length));
    else options.args.push(arg);
  }
  return options;
}
