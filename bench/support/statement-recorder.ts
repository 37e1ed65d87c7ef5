import type { DataSource, Logger } from 'typeorm';

/** One statement as the library sent it: its text and its bound values. */
export interface RecordedStatement {
  sql: string;
  parameters: unknown[];
}

/**
 * Records the statements a DataSource sends while recording, with their parameters, so a
 * benchmark can EXPLAIN exactly what a request ran. Like `SqlCounter`, it wraps the DataSource's
 * logger, which TypeORM hands every query of every query runner before sending it.
 */
export class StatementRecorder {
  private statements: RecordedStatement[] = [];
  private recording = false;

  private constructor() {}

  static install(dataSource: DataSource): StatementRecorder {
    const recorder = new StatementRecorder();
    const logger = dataSource.logger;
    const recording: Logger = Object.assign(Object.create(logger) as Logger, {
      logQuery: (...args: Parameters<Logger['logQuery']>) => {
        // The PostgreSQL driver binds positional parameters: an array (or none).
        const parameters: unknown[] = Array.isArray(args[1]) ? args[1] : [];
        if (recorder.recording) recorder.statements.push({ sql: args[0], parameters });
        logger.logQuery(...args);
      },
    });
    // `logger` is read-only in TypeORM's typings but a plain property at run time.
    Object.assign(dataSource, { logger: recording });
    return recorder;
  }

  /** Records what `work` sends; resolves its result and the statements. */
  async record<T>(work: () => Promise<T>): Promise<{ result: T; statements: RecordedStatement[] }> {
    this.statements = [];
    this.recording = true;
    try {
      const result = await work();
      return { result, statements: this.statements };
    } finally {
      this.recording = false;
    }
  }
}
