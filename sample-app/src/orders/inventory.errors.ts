/** The warehouse API did not answer in time; trying again later usually works. */
export class TransientInventoryError extends Error {
  override readonly name = 'TransientInventoryError';
}

/** No unit left to reserve; retrying will not help. */
export class OutOfStockError extends Error {
  override readonly name = 'OutOfStockError';
}
