import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import {
  GENEVA_DRIVE_ENTITIES,
  GENEVA_DRIVE_MIGRATIONS,
  GenevaDriveModule,
} from 'nestjs-geneva-drive';
import { AppController } from './app.controller';
import { AppService } from './app.service';
import { Thing } from './things/thing.entity';
import { ThingsModule } from './things/things.module';

@Module({
  imports: [
    ScheduleModule.forRoot(), // runs the library's housekeeping cron
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
      entities: [...GENEVA_DRIVE_ENTITIES, Thing],
      migrations: [...GENEVA_DRIVE_MIGRATIONS],
      migrationsRun: true,
      synchronize: true, // the app's own table; the library's come from its migrations
    }),
    GenevaDriveModule.forRoot({
      connection: {
        host: process.env.REDIS_HOST ?? '127.0.0.1',
        port: Number(process.env.REDIS_PORT ?? 6379),
      },
    }),
    ThingsModule,
  ],
  controllers: [AppController],
  providers: [AppService],
})
export class AppModule {}
