import type { DataSource, Logger } from 'typeorm';

/**
 * Calls `onQuery` with every statement `dataSource` sends, then logs it as before. TypeORM hands
 * every query of every query runner (transaction control included) to the DataSource's logger
 * before sending it, so wrapping the logger sees all the library's SQL without touching the driver.
 */
export function tapQueryLog(
  dataSource: DataSource,
  onQuery: (sql: string, parameters: Parameters<Logger['logQuery']>[1]) => void,
): void {
  const logger = dataSource.logger;
  const tapped: Logger = Object.assign(Object.create(logger) as Logger, {
    logQuery: (...args: Parameters<Logger['logQuery']>) => {
      onQuery(args[0], args[1]);
      logger.logQuery(...args);
    },
  });
  // `logger` is read-only in TypeORM's typings but a plain property at run time.
  Object.assign(dataSource, { logger: tapped });
}
