import type { LoggerService } from '@nestjs/common';
import type { CliOutput } from './cli-output';

/**
 * The booted app's logger: warnings and errors to stderr, the rest dropped, so stdout carries
 * only the command's result (one JSON document with `--json`).
 */
export class CliAppLogger implements LoggerService {
  constructor(private readonly output: CliOutput) {}

  log(): void {}

  warn(message: unknown, context?: string): void {
    this.write('WARN', message, context);
  }

  error(message: unknown, ...rest: unknown[]): void {
    const context = rest.at(-1);
    this.write('ERROR', message, typeof context === 'string' ? context : undefined);
  }

  private write(level: string, message: unknown, context: string | undefined): void {
    const text = message instanceof Error ? message.message : String(message);
    this.output.writeErr(`${level}${context ? ` [${context}]` : ''} ${text}\n`);
  }
}
