import { CANCEL_IF_METADATA } from '../common/constants';

/**
 * Marks a method `(ctx: WorkflowContext) => boolean | Promise<boolean>` as a cancel condition,
 * checked before every step: when any returns true the workflow is canceled.
 */
export function CancelIf(): MethodDecorator {
  return (prototype, propertyKey) => {
    const own =
      (Reflect.getOwnMetadata(CANCEL_IF_METADATA, prototype) as string[] | undefined) ?? [];
    Reflect.defineMetadata(CANCEL_IF_METADATA, [...own, String(propertyKey)], prototype);
  };
}
