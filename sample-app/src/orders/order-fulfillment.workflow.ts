import { InjectRepository } from '@nestjs/typeorm';
import {
  CancelIf,
  ExceptionPolicy,
  Step,
  Workflow,
  type StepContext,
  type WorkflowContext,
} from 'nestjs-geneva-drive';
import { Not, type Repository } from 'typeorm';
import { INVENTORY_RETRY_WAIT, REVIEW_MIN_AMOUNT_CENTS, SHIP_WAIT } from './fulfillment.timings';
import { InventoryService } from './inventory.service';
import { OutOfStockError, TransientInventoryError } from './inventory.errors';
import { NotificationsService } from './notifications.service';
import { Order, type OrderStatus } from './order.entity';
import { PAYMENT_CONFIRMED, type PaymentConfirmedPayload } from './payment-confirmed.signal';
import { PaymentsService } from './payments.service';
import { ShippingService } from './shipping.service';

/**
 * Takes an order from "new" to "shipped": reserve stock, wait for the payment provider's webhook
 * and capture the payment, ship after a short wait, then ask for a review (big orders only). Every
 * step is idempotent, because a step can run again after a crash or a reattempt.
 *
 * Exceptions: `reserveStock` reattempts transient warehouse errors itself (step-level policy).
 * Anything else falls through to the class-level policies, tried first-match in array order:
 * running out of stock cancels the workflow; any other error pauses it, so an operator can read
 * the timeline (`GET /workflows/:id`), fix the cause and `POST /workflows/:id/resume`.
 */
@Workflow({
  hero: () => Order,
  onException: [
    new ExceptionPolicy('cancel', { matching: OutOfStockError, report: 'never' }),
    new ExceptionPolicy('pause'),
  ],
})
export class OrderFulfillmentWorkflow {
  constructor(
    @InjectRepository(Order) private readonly orders: Repository<Order>,
    private readonly inventory: InventoryService,
    private readonly payments: PaymentsService,
    private readonly shipping: ShippingService,
    private readonly notifications: NotificationsService,
  ) {}

  /** Checked before every step: `POST /orders/:id/void` cancels the workflow at its next step. */
  @CancelIf()
  orderVoided(ctx: WorkflowContext<Order>): boolean {
    return ctx.hero.status === 'void';
  }

  @Step({
    onException: new ExceptionPolicy('reattempt', {
      matching: TransientInventoryError,
      wait: INVENTORY_RETRY_WAIT,
      maxReattempts: 5,
      // After the 5th reattempt the workflow pauses (the default terminalAction) and the error
      // is reported; the transient failures before that are expected and not reported.
      report: 'terminalOnly',
    }),
  })
  async reserveStock(ctx: StepContext<Order>): Promise<void> {
    this.inventory.reserve(ctx.hero.id);
    await this.setStatus(ctx.hero, 'reserved');
  }

  /**
   * Waits for the `payment_confirmed` signal that `POST /webhooks/payments` delivers. Until a
   * signal whose amount equals the order's arrives, the execution is parked (state `waiting`: no
   * job, no timer, no polling); a signal that arrives earlier is buffered and claimed here. The
   * matcher's predicate sees the hero, so a webhook for the wrong amount never wakes the step.
   */
  @Step({ waitFor: PAYMENT_CONFIRMED })
  async capturePayment(ctx: StepContext<Order>): Promise<void> {
    const payment = ctx.receivedSignal!.payload as PaymentConfirmedPayload;
    this.payments.capture(ctx.hero.id, payment.amountCents, payment.eventId);
    await this.setStatus(ctx.hero, 'paid');
  }

  /** Runs `SHIP_WAIT` after payment: the library enqueues it as a delayed BullMQ job. */
  @Step({ wait: SHIP_WAIT })
  async ship(ctx: StepContext<Order>): Promise<void> {
    const trackingNumber = this.shipping.ship(ctx.hero.id);
    await this.orders.update(
      { id: ctx.hero.id, status: Not('void') },
      { status: 'shipped', trackingNumber },
    );
  }

  /** Skipped (outcome `skipped`) for small orders. */
  @Step({ skipIf: (ctx: WorkflowContext<Order>) => ctx.hero.amountCents < REVIEW_MIN_AMOUNT_CENTS })
  requestReview(ctx: StepContext<Order>): void {
    this.notifications.send(ctx.hero.customerEmail, `How was order #${ctx.hero.id}?`);
  }

  /**
   * Moves the order forward unless it was voided meanwhile; a voided order keeps `void` and the
   * `@CancelIf` above cancels the workflow before its next step.
   */
  private async setStatus(order: Order, status: OrderStatus): Promise<void> {
    await this.orders.update({ id: order.id, status: Not('void') }, { status });
  }
}
