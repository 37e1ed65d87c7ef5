import { Injectable, Logger } from '@nestjs/common';

export interface Capture {
  orderId: number;
  amountCents: number;
  /** The webhook event that confirmed the payment. */
  eventId: string;
  capturedAt: Date;
  refundedAt: Date | null;
}

/** An in-memory payment provider: records captures and refunds, one capture per order. */
@Injectable()
export class PaymentsService {
  private readonly logger = new Logger(PaymentsService.name);
  private readonly captures = new Map<number, Capture>();

  /** Captures the amount. Idempotent per order, as a real provider's idempotency key would make it. */
  capture(orderId: number, amountCents: number, eventId: string): Capture {
    const existing = this.captures.get(orderId);
    if (existing) return existing;
    const capture: Capture = {
      orderId,
      amountCents,
      eventId,
      capturedAt: new Date(),
      refundedAt: null,
    };
    this.captures.set(orderId, capture);
    this.logger.log(`Captured ${amountCents} cents for order ${orderId}`);
    return capture;
  }

  /** Refunds the order's capture, if there is one that is not refunded yet. */
  refund(orderId: number): void {
    const capture = this.captures.get(orderId);
    if (!capture || capture.refundedAt) return;
    capture.refundedAt = new Date();
    this.logger.log(`Refunded ${capture.amountCents} cents for order ${orderId}`);
  }

  captureFor(orderId: number): Capture | null {
    return this.captures.get(orderId) ?? null;
  }
}
