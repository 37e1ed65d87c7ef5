import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { InventoryController } from './inventory.controller';
import { InventoryService } from './inventory.service';
import { NotificationsService } from './notifications.service';
import { Order } from './order.entity';
import { OrderFulfillmentWorkflow } from './order-fulfillment.workflow';
import { OrdersController } from './orders.controller';
import { OrdersService } from './orders.service';
import { PaymentWebhooksController } from './payment-webhooks.controller';
import { PaymentsService } from './payments.service';
import { ShippingService } from './shipping.service';

@Module({
  imports: [TypeOrmModule.forFeature([Order])],
  controllers: [OrdersController, InventoryController, PaymentWebhooksController],
  providers: [
    // A workflow is an ordinary provider: GenevaDriveModule discovers it at boot.
    OrderFulfillmentWorkflow,
    OrdersService,
    InventoryService,
    PaymentsService,
    ShippingService,
    NotificationsService,
  ],
  exports: [InventoryService, PaymentsService, ShippingService, NotificationsService],
})
export class OrdersModule {}
