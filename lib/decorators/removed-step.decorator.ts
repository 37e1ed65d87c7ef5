import { appendRecordedStep } from './append-step';

/**
 * A gravestone for a step that no longer exists, declared where the step used to be:
 * `@RemovedStep() capturePayment?: never;`. In-flight executions of it are skipped and the
 * workflow continues.
 */
export function RemovedStep(name?: string): PropertyDecorator {
  return (prototype, propertyKey) => {
    appendRecordedStep(prototype, {
      kind: 'removed',
      name,
      propertyKey: String(propertyKey),
      options: {},
    });
  };
}
