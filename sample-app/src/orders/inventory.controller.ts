import { Body, Controller, Get, HttpCode, Post } from '@nestjs/common';
import { SetStockDto, SimulateOutageDto } from './orders.dto';
import { InventoryService } from './inventory.service';

/** Knobs on the fake warehouse, to watch the exception policies of `OrderFulfillmentWorkflow`. */
@Controller('inventory')
export class InventoryController {
  constructor(private readonly inventory: InventoryService) {}

  @Get()
  snapshot() {
    return this.inventory.snapshot();
  }

  /** The next `failures` reservations throw `TransientInventoryError` (reattempted by the step). */
  @Post('outage')
  @HttpCode(200)
  outage(@Body() body: SimulateOutageDto) {
    this.inventory.simulateOutage(body.failures);
    return this.inventory.snapshot();
  }

  /** Sets the available stock; at 0, `reserveStock` throws `OutOfStockError` (cancels the workflow). */
  @Post('stock')
  @HttpCode(200)
  stock(@Body() body: SetStockDto) {
    this.inventory.setAvailable(body.available);
    return this.inventory.snapshot();
  }
}
