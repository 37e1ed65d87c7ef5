import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { PaymentWebhookDto } from './orders.dto';
import { OrdersService } from './orders.service';

/**
 * The payment provider calls this when a payment succeeds. It turns the call into a
 * `payment_confirmed` signal for the order's workflow, keyed by the provider's event id, and
 * answers 200 both the first time and for a redelivery (`duplicateDelivery: true`), so the
 * provider stops retrying. No such order → 404; a new event for a finished or canceled workflow
 * → 409 (`WorkflowNotOngoingError`, mapped by `GenevaDriveExceptionFilter`).
 */
@Controller('webhooks')
export class PaymentWebhooksController {
  constructor(private readonly orders: OrdersService) {}

  @Post('payments')
  @HttpCode(200)
  async payments(@Body() body: PaymentWebhookDto) {
    const { workflow, signal } = await this.orders.confirmPayment(body.orderId, {
      eventId: body.eventId,
      amountCents: body.amountCents,
    });
    return {
      signal: {
        id: signal.id,
        name: signal.name,
        // `claimed` when it woke the parked capturePayment step; `pending` when it arrived early
        // (claimed at the step's gate), when the workflow is paused (buffered until resume), or
        // when its amount does not match the order's.
        state: signal.state,
        duplicateDelivery: signal.duplicateDelivery,
        workflowId: workflow.id,
      },
    };
  }
}
