import type { ResumableStepOptions } from '../interfaces/workflow-options.interface';
import { appendRecordedStep } from './append-step';

/**
 * Declares a resumable step: the method receives `(iter: IterableStep<Cursor>, ctx: StepContext)`
 * and checkpoints a cursor so it can be interrupted and continued.
 */
export function ResumableStep(options?: ResumableStepOptions): MethodDecorator;
export function ResumableStep(name: string, options?: ResumableStepOptions): MethodDecorator;
export function ResumableStep(
  nameOrOptions?: string | ResumableStepOptions,
  options?: ResumableStepOptions,
): MethodDecorator {
  const [name, stepOptions] =
    typeof nameOrOptions === 'string' ? [nameOrOptions, options] : [undefined, nameOrOptions];
  return (prototype, propertyKey) => {
    appendRecordedStep(prototype, {
      kind: 'resumable',
      name,
      propertyKey: String(propertyKey),
      // Recorded as given (null included): discovery refuses anything but an options object.
      options: stepOptions === undefined ? {} : stepOptions,
    });
  };
}
