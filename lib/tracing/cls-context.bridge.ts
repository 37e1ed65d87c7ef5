/**
 * The caller's nestjs-cls store, as far as `cls: { keys }` names it (SPEC §16.6): captured at
 * `start()` into the workflow's context, and set again in a fresh CLS context around each step.
 * Without `cls` the no-op bridge below is used and nestjs-cls is never loaded.
 */
export abstract class ClsContextBridge {
  /** The configured keys' values in the active CLS context; null when none (or no context). */
  abstract capture(): Record<string, unknown> | null;

  /** Runs `fn` in a CLS context holding the configured keys found in `context`. */
  abstract run<T>(
    context: Readonly<Record<string, unknown>> | null | undefined,
    fn: () => Promise<T>,
  ): Promise<T>;
}

/** No `cls` option: nothing captured, steps run as they are. */
export class NoopClsContextBridge extends ClsContextBridge {
  capture(): null {
    return null;
  }

  run<T>(_context: unknown, fn: () => Promise<T>): Promise<T> {
    return fn();
  }
}
