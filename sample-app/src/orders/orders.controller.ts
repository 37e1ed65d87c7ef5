import { Body, Controller, Get, HttpCode, Param, ParseIntPipe, Post } from '@nestjs/common';
import { CreateOrderDto } from './orders.dto';
import { OrdersService } from './orders.service';

@Controller('orders')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  /** Creates an order and starts its fulfillment workflow; returns both. */
  @Post()
  create(@Body() body: CreateOrderDto) {
    return this.orders.create(body.email, body.amountCents);
  }

  /** The order and its latest fulfillment workflow. */
  @Get(':id')
  show(@Param('id', ParseIntPipe) id: number) {
    return this.orders.show(id);
  }

  /** Voids the order; its workflow cancels itself before its next step (`@CancelIf`). */
  @Post(':id/void')
  @HttpCode(200)
  void(@Param('id', ParseIntPipe) id: number) {
    return this.orders.void(id);
  }
}
