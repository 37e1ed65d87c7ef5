import { CliUsageError } from './cli-usage.error';

/** Where the module `geneva-drive` boots lives: a file and the name it is exported under. */
export interface AppReference {
  file: string;
  exportName: string;
}

const EXPORT_NAME = /^[A-Za-z_$][\w$]*$/;

/** Parses `--app <file>#<export>` (the last `#` splits, so a path may contain one). */
export function parseAppReference(text: string): AppReference {
  const split = text.lastIndexOf('#');
  const file = split < 0 ? text : text.slice(0, split);
  const exportName = split < 0 ? '' : text.slice(split + 1);
  if (file === '' || !EXPORT_NAME.test(exportName)) {
    throw new CliUsageError(
      `--app '${text}' is not <file>#<export>: name the compiled file and the module class it exports, e.g. --app dist/app.module.js#AppModule.`,
    );
  }
  return { file, exportName };
}
