import type { DataSource } from 'typeorm';
import { tapQueryLog } from './query-log-tap';

/** One statement as the library sent it: its text and its bound values. */
export interface RecordedStatement {
  sql: string;
  parameters: unknown[];
}

/**
 * Records the statements a DataSource sends while recording, with their parameters, so a
 * benchmark can EXPLAIN exactly what a request ran (through `tapQueryLog`, as `SqlCounter`).
 */
export class StatementRecorder {
  private statements: RecordedStatement[] = [];
  private recording = false;

  private constructor() {}

  static install(dataSource: DataSource): StatementRecorder {
    const recorder = new StatementRecorder();
    tapQueryLog(dataSource, (sql, parameters) => {
      // The PostgreSQL driver binds positional parameters: an array (or none).
      if (recorder.recording)
        recorder.statements.push({ sql, parameters: Array.isArray(parameters) ? parameters : [] });
    });
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
