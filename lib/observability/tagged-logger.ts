import type { LoggerService } from '@nestjs/common';

/** A LoggerService that prefixes every message with tags such as `OrderWorkflow id=…`. */
export class TaggedLogger implements LoggerService {
  constructor(
    private readonly base: LoggerService,
    private readonly tags: readonly string[],
  ) {}

  withTag(tag: string): TaggedLogger {
    return new TaggedLogger(this.base, [...this.tags, tag]);
  }

  log(message: unknown, ...rest: unknown[]): void {
    this.base.log(this.format(message), ...rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.base.error(this.format(message), ...rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.base.warn(this.format(message), ...rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.base.debug?.(this.format(message), ...rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.base.verbose?.(this.format(message), ...rest);
  }

  private format(message: unknown): string {
    const text = typeof message === 'string' ? message : JSON.stringify(message);
    return this.tags.map((tag) => `[${tag}]`).join(' ') + ' ' + text;
  }
}
