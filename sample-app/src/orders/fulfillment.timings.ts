/**
 * Durations used in `@Step()` / `ExceptionPolicy` options of `OrderFulfillmentWorkflow`.
 *
 * Decorator options are evaluated once, when the workflow class is defined (at import time), not
 * when Nest builds the module: that is why these come from environment variables read here rather
 * than from `SampleAppConfig`. The library validates them at boot (`'later'` fails startup with a
 * `StepConfigurationError`).
 */

/** How long `ship` waits after payment: a delayed BullMQ job (env `SHIP_WAIT`, default 2s). */
export const SHIP_WAIT = process.env.SHIP_WAIT ?? '2s';

/** Delay between reattempts of `reserveStock` after a transient warehouse error. */
export const INVENTORY_RETRY_WAIT = process.env.INVENTORY_RETRY_WAIT ?? '2s';

/** Orders below this amount get no review request (the `skipIf` of `requestReview`). */
export const REVIEW_MIN_AMOUNT_CENTS = 1000;
