import { SignalMatcher } from 'nestjs-geneva-drive';
import type { Order } from './order.entity';

/** The signal `POST /webhooks/payments` delivers to an order's fulfillment workflow. */
export const PAYMENT_CONFIRMED_SIGNAL = 'payment_confirmed';

/** Its payload (JSON, as stored in `geneva_drive_signals.payload`). */
export interface PaymentConfirmedPayload {
  /** The payment provider's event id, also the signal's idempotency key. */
  eventId: string;
  amountCents: number;
}

/**
 * What `capturePayment` waits for: a `payment_confirmed` signal for exactly the order's amount.
 * The predicate runs when a signal is delivered (under the workflow lock, with the hero loaded)
 * and at the step's gate. A signal for another amount stays `pending` and never wakes the step.
 */
export const PAYMENT_CONFIRMED = new SignalMatcher<PaymentConfirmedPayload | null, Order>(
  PAYMENT_CONFIRMED_SIGNAL,
  (payload, ctx) => payload?.amountCents === ctx.hero.amountCents,
);
