import { Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { WorkflowService, type WorkflowEntity } from 'nestjs-geneva-drive';
import type { DataSource, Repository } from 'typeorm';
import { Campaign } from './campaign.entity';
import { SUBSCRIBER_INSERT_CHUNK } from './campaign.settings';
import { CampaignWorkflow } from './campaign.workflow';
import { Delivery } from './delivery.entity';
import { Subscriber } from './subscriber.entity';

/** Where a campaign's `sendEmails` step is, as `GET /campaigns/:id` shows it. */
export interface CampaignProgress {
  subscribers: number;
  /** Rows in `campaign_deliveries` for this campaign. */
  delivered: number;
  /** Id of the last subscriber `sendEmails` checkpointed (null before the first one). */
  cursor: number | null;
  /** Executions of `sendEmails` so far: each one after the first continues its predecessor. */
  chainLength: number;
  /** The workflow's current execution (step name and state), null once it is over. */
  current: { step: string; state: string } | null;
}

export interface CampaignView {
  campaign: Campaign;
  workflow: WorkflowEntity | null;
  progress: CampaignProgress;
}

@Injectable()
export class CampaignsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(Campaign) private readonly campaigns: Repository<Campaign>,
    private readonly workflows: WorkflowService,
  ) {}

  /**
   * Creates the campaign, seeds `subscriberCount` subscribers (multi-row INSERTs of
   * `SUBSCRIBER_INSERT_CHUNK`) and starts its workflow, all in one transaction: the workflow's
   * first job is enqueued after the commit, when every subscriber row is visible.
   */
  create(
    name: string,
    subscriberCount: number,
  ): Promise<{ campaign: Campaign; workflow: WorkflowEntity }> {
    return this.dataSource.transaction(async (manager) => {
      const campaign = await manager.save(
        manager.create(Campaign, { name, subscriberCount, status: 'sending' }),
      );
      for (let start = 0; start < subscriberCount; start += SUBSCRIBER_INSERT_CHUNK) {
        const size = Math.min(SUBSCRIBER_INSERT_CHUNK, subscriberCount - start);
        const rows = Array.from({ length: size }, (_, i) => ({
          campaignId: campaign.id,
          email: `subscriber-${start + i + 1}@example.com`,
        }));
        await manager.createQueryBuilder().insert().into(Subscriber).values(rows).execute();
      }
      const workflow = await this.workflows.start(CampaignWorkflow, { hero: campaign, manager });
      return { campaign, workflow };
    });
  }

  async show(id: number): Promise<CampaignView> {
    const campaign = await this.campaigns.findOneBy({ id });
    if (!campaign) throw new NotFoundException(`No campaign with id ${id}.`);
    const [workflow] = await this.workflows.list({
      workflow: CampaignWorkflow,
      hero: campaign,
      limit: 1,
    });
    const delivered = await this.dataSource.getRepository(Delivery).countBy({ campaignId: id });
    const progress: CampaignProgress = {
      subscribers: campaign.subscriberCount,
      delivered,
      cursor: null,
      chainLength: 0,
      current: null,
    };
    if (workflow) {
      const [current, history] = await Promise.all([
        this.workflows.currentExecution(workflow),
        this.workflows.executionHistory(workflow),
      ]);
      const chain = history.filter((execution) => execution.stepName === 'sendEmails');
      // The running execution's cursor; once the chain is over, the last one's.
      const cursorSource = current?.stepName === 'sendEmails' ? current : chain.at(-1);
      progress.cursor = (cursorSource?.cursor as number | null | undefined) ?? null;
      progress.chainLength = chain.length;
      progress.current = current ? { step: current.stepName, state: current.state } : null;
    }
    return { campaign, workflow: workflow ?? null, progress };
  }
}
