import { CliExitCode } from './cli-exit-code';

/** Where `geneva-drive` writes (process.stdout/stderr, or a test's buffers). */
export interface CliStreams {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/**
 * Everything a command prints goes through here: with `--json` exactly one JSON document on
 * stdout (the result, or `{ error, exitCode }`), else plain text; diagnostics go to stderr.
 */
export class CliOutput {
  constructor(
    readonly json: boolean,
    private readonly streams: CliStreams,
  ) {}

  /** The command's result: `human` as text, or `document` as JSON. */
  result(human: string, document: unknown): void {
    if (this.json) this.streams.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    else this.streams.stdout.write(human.endsWith('\n') ? human : `${human}\n`);
  }

  /** Why the command ended with `exitCode` (commander has printed its own usage errors already). */
  failure(error: unknown, exitCode: CliExitCode, printed = false): void {
    const { name, message } =
      error instanceof Error ? error : { name: 'Error', message: String(error) };
    if (this.json) this.result('', { error: { name, message }, exitCode });
    else if (!printed) this.streams.stderr.write(`geneva-drive: ${message}\n`);
  }

  /** Text for stdout outside the result (commander's help). */
  writeOut(text: string): void {
    this.streams.stdout.write(text);
  }

  /** Text for stderr (commander's messages, the app's warnings and errors). */
  writeErr(text: string): void {
    this.streams.stderr.write(text);
  }
}

/** The exit code a run ends with; commands record theirs here. */
export class CliOutcome {
  exitCode: CliExitCode = CliExitCode.done;
}
