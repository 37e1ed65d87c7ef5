import { Body, Controller, Get, Param, ParseIntPipe, Post } from '@nestjs/common';
import { CreateCampaignDto } from './campaigns.dto';
import { CampaignsService } from './campaigns.service';

@Controller('campaigns')
export class CampaignsController {
  constructor(private readonly campaigns: CampaignsService) {}

  /** Creates a campaign with `subscribers` fake subscribers and starts `CampaignWorkflow`. */
  @Post()
  create(@Body() body: CreateCampaignDto) {
    return this.campaigns.create(body.name, body.subscribers);
  }

  /** The campaign, its workflow, and the progress of `sendEmails`. */
  @Get(':id')
  show(@Param('id', ParseIntPipe) id: number) {
    return this.campaigns.show(id);
  }
}
