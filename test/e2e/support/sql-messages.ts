import type { DataSource, Logger } from 'typeorm';
import { splitStatements } from './sql-text';

/**
 * Records every SQL message the DataSource's logger sees from now on, split into statements: on
 * PostgreSQL's hot path one message is one round trip.
 */
export function recordMessages(dataSource: DataSource): string[][] {
  const messages: string[][] = [];
  const logger = dataSource.logger;
  const recording: Logger = Object.assign(Object.create(logger) as Logger, {
    logQuery: (...args: Parameters<Logger['logQuery']>) => {
      messages.push(splitStatements(args[0]));
      logger.logQuery(...args);
    },
  });
  // `logger` is read-only in TypeORM's typings but a plain property at run time.
  Object.assign(dataSource, { logger: recording });
  return messages;
}

/** A step fence's statement (`PostgresQueryBatch.guess`): its message guessed its rows. */
export const isFence = (statement: string): boolean =>
  /^SELECT set_config\(\$\d+, CASE WHEN /.test(statement);

/** The messages that open a transaction: the harness's polls, outside any, left out. */
export const transactionsOf = (sent: string[][]): string[][] =>
  sent.filter((statements) => statements[0] === 'BEGIN');
