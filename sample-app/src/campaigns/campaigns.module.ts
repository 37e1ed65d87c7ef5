import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CampaignMailer } from './campaign-mailer.service';
import { Campaign } from './campaign.entity';
import { CampaignWorkflow } from './campaign.workflow';
import { CampaignsController } from './campaigns.controller';
import { CampaignsService } from './campaigns.service';
import { Delivery } from './delivery.entity';
import { Subscriber } from './subscriber.entity';

/** The app's own tables; `app.module.ts` lists them in the DataSource's `entities`. */
export const CAMPAIGN_ENTITIES = [Campaign, Subscriber, Delivery];

@Module({
  imports: [TypeOrmModule.forFeature(CAMPAIGN_ENTITIES)],
  controllers: [CampaignsController],
  providers: [CampaignWorkflow, CampaignsService, CampaignMailer],
  exports: [CampaignMailer],
})
export class CampaignsModule {}
