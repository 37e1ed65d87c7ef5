import { Injectable, Logger } from '@nestjs/common';
import { OutOfStockError, TransientInventoryError } from './inventory.errors';

/**
 * An in-memory stand-in for a warehouse API: one unit of stock per order. It can be told to fail
 * the next few calls with `TransientInventoryError`, to show the `reserveStock` step's reattempt
 * policy at work, and its stock can be set to 0 to show the workflow's cancel policy.
 */
@Injectable()
export class InventoryService {
  private readonly logger = new Logger(InventoryService.name);
  private available = 1000;
  private pendingOutages = 0;
  private readonly reservations = new Set<number>();

  /**
   * Reserves one unit for the order. Idempotent: steps run at least once (a worker can die after
   * the call and before the step is recorded), so a second call for the same order is a no-op.
   */
  reserve(orderId: number): void {
    if (this.reservations.has(orderId)) return;
    if (this.pendingOutages > 0) {
      this.pendingOutages -= 1;
      throw new TransientInventoryError(`Warehouse timed out reserving stock for order ${orderId}`);
    }
    if (this.available < 1) throw new OutOfStockError(`No stock left for order ${orderId}`);
    this.available -= 1;
    this.reservations.add(orderId);
    this.logger.log(`Reserved 1 unit for order ${orderId} (${this.available} left)`);
  }

  /** Gives the order's unit back, if it holds one. */
  release(orderId: number): void {
    if (!this.reservations.delete(orderId)) return;
    this.available += 1;
    this.logger.log(`Released the unit of order ${orderId} (${this.available} left)`);
  }

  /** Makes the next `failures` reservations throw `TransientInventoryError`. */
  simulateOutage(failures: number): void {
    this.pendingOutages = failures;
  }

  setAvailable(available: number): void {
    this.available = available;
  }

  snapshot(): { available: number; reserved: number; pendingOutages: number } {
    return {
      available: this.available,
      reserved: this.reservations.size,
      pendingOutages: this.pendingOutages,
    };
  }
}
