import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { configFromEnv, describeSetup } from './config';

async function bootstrap(): Promise<void> {
  const logger = new Logger('SampleApp');
  logger.log(describeSetup(configFromEnv()));
  const app = await NestFactory.create(AppModule.forRoot());
  // Without this, SIGTERM/SIGINT kill the process without running Nest's shutdown hooks.
  // nestjs-geneva-drive stops in `beforeApplicationShutdown`: it lets running steps finish and
  // record their outcome, and closes its workers, before TypeORM closes the database.
  // A process killed without the hooks leaves steps `in_progress` until housekeeping recovers them.
  app.enableShutdownHooks();
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port);
  logger.log(`Listening on http://localhost:${port}`);
}

bootstrap().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
