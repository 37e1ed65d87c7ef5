import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Thing } from './thing.entity';
import { ThingWorkflow } from './thing.workflow';
import { ThingsController } from './things.controller';

@Module({
  imports: [TypeOrmModule.forFeature([Thing])],
  controllers: [ThingsController],
  providers: [ThingWorkflow],
})
export class ThingsModule {}
