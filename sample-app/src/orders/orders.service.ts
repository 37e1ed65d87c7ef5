import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { WorkflowService, type WorkflowEntity } from 'nestjs-geneva-drive';
import type { DataSource, Repository } from 'typeorm';
import { InventoryService } from './inventory.service';
import { Order } from './order.entity';
import { OrderFulfillmentWorkflow } from './order-fulfillment.workflow';
import { PaymentsService } from './payments.service';

export interface OrderWithWorkflow {
  order: Order;
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
    return { order, workflow: await this.latestWorkflow(order) };
  }

  /**
   * Voids the order and undoes what was done (stock, payment). The workflow is not touched here:
   * its `@CancelIf() orderVoided` cancels it before its next step.
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
    }
    return this.show(id);
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
