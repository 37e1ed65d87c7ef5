import { Injectable, Logger } from '@nestjs/common';

export interface SentEmail {
  to: string;
  subject: string;
  sentAt: Date;
}

/** An in-memory outbox standing in for an email provider. */
@Injectable()
export class NotificationsService {
  private readonly logger = new Logger(NotificationsService.name);
  readonly outbox: SentEmail[] = [];

  send(to: string, subject: string): void {
    this.outbox.push({ to, subject, sentAt: new Date() });
    this.logger.log(`Emailed ${to}: ${subject}`);
  }
}
