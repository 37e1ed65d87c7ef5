import { STEPS_METADATA } from '../common/constants';
import type { RecordedStep } from './recorded-step.interface';

/**
 * Appends to the ordered step list of the class that declares the member. The list is the
 * prototype's own, so a subclass never mutates its parent's steps.
 */
export function appendRecordedStep(prototype: object, step: RecordedStep): void {
  const own =
    (Reflect.getOwnMetadata(STEPS_METADATA, prototype) as RecordedStep[] | undefined) ?? [];
  Reflect.defineMetadata(STEPS_METADATA, [...own, step], prototype);
}
