import { Injectable, Logger } from '@nestjs/common';

/** An in-memory carrier: hands out one tracking number per order. */
@Injectable()
export class ShippingService {
  private readonly logger = new Logger(ShippingService.name);
  private readonly shipments = new Map<number, string>();

  /** Books the shipment and returns its tracking number. Idempotent per order. */
  ship(orderId: number): string {
    const existing = this.shipments.get(orderId);
    if (existing) return existing;
    const trackingNumber = `TRK-${orderId}-${Date.now().toString(36).toUpperCase()}`;
    this.shipments.set(orderId, trackingNumber);
    this.logger.log(`Shipped order ${orderId} as ${trackingNumber}`);
    return trackingNumber;
  }
}
