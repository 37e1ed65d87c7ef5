import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import {
  InvalidStateError,
  WorkflowService,
  type SignalEntity,
  type WorkflowEntity,
} from 'nestjs-geneva-drive';
import type { DataSource, Repository } from 'typeorm';
import { InventoryService } from './inventory.service';
import { Order } from './order.entity';
import { OrderFulfillmentWorkflow } from './order-fulfillment.workflow';
import { PAYMENT_CONFIRMED_SIGNAL, type PaymentConfirmedPayload } from './payment-confirmed.signal';
import { PaymentsService, type Capture } from './payments.service';

export interface OrderWithWorkflow {
  order: Order;
  payment: Capture | null;
  workflow: WorkflowEntity | null;
}

@Injectable()
export class OrdersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @InjectRepository(Order) private readonly orders: Repository<Order>,
    private readonly workflows: WorkflowService,
    private readonly inventory: InventoryService,
    private readonly payments: PaymentsService,
  ) {}

  /**
   * Saves the order and starts its fulfillment workflow in one transaction: with `manager`, the
   * workflow rows commit (or roll back) with the order, and the first step's BullMQ job is
   * enqueued only after the commit, so a worker never picks up a step for an order that does not
   * exist.
   */
  async create(
    email: string,
    amountCents: number,
  ): Promise<{ order: Order; workflow: WorkflowEntity }> {
    return this.dataSource.transaction(async (manager) => {
      const order = await manager.save(
        manager.create(Order, { customerEmail: email, amountCents, status: 'new' }),
      );
      const workflow = await this.workflows.start(OrderFulfillmentWorkflow, {
        hero: order,
        manager,
      });
      return { order, workflow };
    });
  }

  async show(id: number): Promise<OrderWithWorkflow> {
    const order = await this.load(id);
    return {
      order,
      payment: this.payments.captureFor(id),
      workflow: await this.latestWorkflow(order),
    };
  }

  /**
   * Delivers the payment provider's confirmation to the order's workflow as a `payment_confirmed`
   * signal, with the provider's event id as idempotency key: a redelivered event returns the
   * original signal with `duplicateDelivery: true` and wakes nothing.
   *
   * The signal goes to the ongoing workflow. When there is none, it goes to the order's latest
   * workflow anyway, so that a provider retrying an event after the workflow finished still gets
   * its 200 (the library recognizes the known key and returns the original signal); a new event
   * for a finished or canceled workflow is refused with `WorkflowNotOngoingError` (409). An
   * unknown order, or an order without any workflow, is a 404.
   */
  async confirmPayment(
    orderId: number,
    payload: PaymentConfirmedPayload,
  ): Promise<{ workflow: WorkflowEntity; signal: SignalEntity }> {
    const order = await this.load(orderId);
    const workflow =
      (await this.workflows.findOngoing(OrderFulfillmentWorkflow, order)) ??
      (await this.latestWorkflow(order));
    if (!workflow) throw new NotFoundException(`Order ${orderId} has no fulfillment workflow.`);
    const signal = await this.workflows.signal(workflow, PAYMENT_CONFIRMED_SIGNAL, {
      payload,
      idempotencyKey: payload.eventId,
    });
    return { workflow, signal };
  }

  /**
   * Voids the order and undoes what was done (stock, payment). The workflow's
   * `@CancelIf() orderVoided` cancels it before its next step. A workflow parked at
   * `capturePayment` has no next step coming until a payment arrives, so it is canceled here.
   */
  async void(id: number): Promise<OrderWithWorkflow> {
    const order = await this.load(id);
    if (order.status === 'shipped') {
      throw new ConflictException(`Order ${id} has shipped; it can no longer be voided.`);
    }
    if (order.status !== 'void') {
      await this.orders.update({ id }, { status: 'void' });
      this.inventory.release(id);
      this.payments.refund(id);
      await this.cancelIfParked(order);
    }
    return this.show(id);
  }

  /**
   * Cancels the order's workflow if it is parked waiting for a signal. Any other ongoing workflow
   * reaches a step gate by itself, where `@CancelIf` sees the void order (the status update above
   * has committed by then).
   */
  private async cancelIfParked(order: Order): Promise<void> {
    const workflow = await this.workflows.findOngoing(OrderFulfillmentWorkflow, order);
    if (!workflow) return;
    const current = await this.workflows.currentExecution(workflow);
    if (current?.state !== 'waiting') return;
    try {
      await this.workflows.cancel(workflow);
    } catch (error) {
      // A payment woke the step meanwhile and its gate's @CancelIf canceled the workflow first.
      if (!(error instanceof InvalidStateError)) throw error;
    }
  }

  private async load(id: number): Promise<Order> {
    const order = await this.orders.findOneBy({ id });
    if (!order) throw new NotFoundException(`No order with id ${id}.`);
    return order;
  }

  private async latestWorkflow(order: Order): Promise<WorkflowEntity | null> {
    const [latest] = await this.workflows.list({
      workflow: OrderFulfillmentWorkflow,
      hero: order,
      limit: 1,
    });
    return latest ?? null;
  }
}
