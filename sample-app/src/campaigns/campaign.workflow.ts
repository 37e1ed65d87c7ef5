import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import {
  ResumableStep,
  Step,
  Workflow,
  type IterableStep,
  type StepContext,
} from 'nestjs-geneva-drive';
import type { DataSource, Repository } from 'typeorm';
import { CampaignMailer } from './campaign-mailer.service';
import { Campaign } from './campaign.entity';
import { CAMPAIGN_MAX_ITERATIONS } from './campaign.settings';
import { Delivery } from './delivery.entity';
import { Subscriber } from './subscriber.entity';

/**
 * Emails every subscriber of a campaign, then records a report.
 *
 * `sendEmails` is a resumable step: it walks the campaign's subscribers by id and checkpoints the
 * id of each one it has handled (the cursor). After `CAMPAIGN_MAX_ITERATIONS` subscribers the
 * execution ends `completed/continued` and a successor execution (`continues_from_id`) picks up
 * after the cursor. A restart, a SIGTERM, `POST /workflows/:id/pause` or an exception (the default
 * policy pauses the workflow) also stop it at a checkpoint, and it continues from there after a
 * restart or `resume`: no subscriber is skipped, and its row in `campaign_deliveries` keeps the
 * one processed again (handled, but not yet checkpointed) from being emailed twice.
 */
@Workflow({ hero: () => Campaign })
export class CampaignWorkflow {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(Subscriber) private readonly subscribers: Repository<Subscriber>,
    @InjectRepository(Campaign) private readonly campaigns: Repository<Campaign>,
    private readonly mailer: CampaignMailer,
  ) {}

  @ResumableStep({ maxIterations: CAMPAIGN_MAX_ITERATIONS })
  async sendEmails(iter: IterableStep<number>, ctx: StepContext<Campaign>): Promise<void> {
    if (iter.resumed) ctx.logger.log(`Continuing after subscriber ${String(iter.cursor)}`);
    // The library adds `AND subscriber.id > :cursor ORDER BY subscriber.id LIMIT 100` per page.
    const query = this.subscribers
      .createQueryBuilder('subscriber')
      .where('subscriber.campaignId = :campaignId', { campaignId: ctx.hero.id });
    await iter.iterateOverRecords(query, (subscriber) => this.deliver(ctx.hero, subscriber));
  }

  @Step()
  async report(ctx: StepContext<Campaign>): Promise<void> {
    const deliveredCount = await this.dataSource
      .getRepository(Delivery)
      .countBy({ campaignId: ctx.hero.id });
    await this.campaigns.update(
      { id: ctx.hero.id },
      { status: 'sent', deliveredCount, reportedAt: new Date() },
    );
    ctx.logger.log(
      `Campaign ${ctx.hero.id} sent to ${deliveredCount} of ${ctx.hero.subscriberCount} subscribers`,
    );
  }

  /**
   * Sends the email unless the subscriber already has a delivery row. The row commits only if the
   * send succeeded; a crash between the send and the commit sends that one email again
   * (at-least-once; a real provider's idempotency key, e.g. the subscriber id, closes that gap).
   * A look-up, then a plain INSERT: it works on every database the app runs on (TypeORM has no
   * RETURNING on SQLite). Executions of one workflow never run at once, so nothing races the
   * look-up; were it to, the primary key would refuse the second row before its email went out.
   */
  private deliver(campaign: Campaign, subscriber: Subscriber): Promise<void> {
    return this.dataSource.transaction(async (manager) => {
      if (await manager.existsBy(Delivery, { subscriberId: subscriber.id })) return;
      await manager.insert(Delivery, {
        subscriberId: subscriber.id,
        campaignId: campaign.id,
        sentAt: new Date(),
      });
      this.mailer.send(campaign.id, subscriber.email);
    });
  }
}
