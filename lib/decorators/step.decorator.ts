import type { StepOptions } from '../interfaces/workflow-options.interface';
import { appendRecordedStep } from './append-step';

/**
 * Declares a step. Steps run in declaration order; the name defaults to the method name. The method
 * receives a `StepContext<Hero>`.
 */
export function Step(options?: StepOptions): MethodDecorator;
export function Step(name: string, options?: StepOptions): MethodDecorator;
export function Step(nameOrOptions?: string | StepOptions, options?: StepOptions): MethodDecorator {
  const [name, stepOptions] =
    typeof nameOrOptions === 'string' ? [nameOrOptions, options] : [undefined, nameOrOptions];
  return (prototype, propertyKey) => {
    appendRecordedStep(prototype, {
      kind: 'step',
      name,
      propertyKey: String(propertyKey),
      // Recorded as given (null included): discovery refuses anything but an options object.
      options: stepOptions === undefined ? {} : stepOptions,
    });
  };
}
