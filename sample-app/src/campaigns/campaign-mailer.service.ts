import { Injectable } from '@nestjs/common';

/**
 * An in-memory stand-in for a bulk email provider. It only counts: how many emails each campaign
 * sent, and to whom, so a test can check that nobody got the same campaign twice.
 */
@Injectable()
export class CampaignMailer {
  private readonly sent = new Map<number, Map<string, number>>();

  send(campaignId: number, to: string): void {
    const recipients = this.sent.get(campaignId) ?? new Map<string, number>();
    recipients.set(to, (recipients.get(to) ?? 0) + 1);
    this.sent.set(campaignId, recipients);
  }

  /** Emails sent for the campaign: total, distinct recipients, and recipients emailed twice or more. */
  stats(campaignId: number): { sent: number; recipients: number; duplicates: number } {
    const recipients = [...(this.sent.get(campaignId)?.values() ?? [])];
    return {
      sent: recipients.reduce((sum, count) => sum + count, 0),
      recipients: recipients.length,
      duplicates: recipients.filter((count) => count > 1).length,
    };
  }
}
