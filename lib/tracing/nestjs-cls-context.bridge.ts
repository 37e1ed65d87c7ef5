import type { ClsServiceManager } from 'nestjs-cls';
import { ClsContextBridge } from './cls-context.bridge';

/** `cls: { keys }` on nestjs-cls: reads and writes through its public `ClsServiceManager`. */
export class NestjsClsContextBridge extends ClsContextBridge {
  constructor(
    private readonly manager: typeof ClsServiceManager,
    private readonly keys: readonly string[],
  ) {
    super();
  }

  capture(): Record<string, unknown> | null {
    const cls = this.manager.getClsService();
    if (!cls.isActive()) return null;
    let captured: Record<string, unknown> | null = null;
    for (const key of this.keys) {
      const value: unknown = cls.get(key);
      if (value !== undefined) (captured ??= {})[key] = value;
    }
    return captured;
  }

  run<T>(
    context: Readonly<Record<string, unknown>> | null | undefined,
    fn: () => Promise<T>,
  ): Promise<T> {
    const cls = this.manager.getClsService();
    return cls.run({ ifNested: 'override' }, () => {
      for (const key of this.keys) {
        if (context && Object.prototype.hasOwnProperty.call(context, key))
          cls.set(key, context[key]);
      }
      return fn();
    });
  }
}
