import type { ResumableStepOptions } from '../interfaces/workflow-options.interface';

/** What `@Step`, `@ResumableStep` and `@RemovedStep` record, in declaration order. */
export interface RecordedStep {
  kind: 'step' | 'resumable' | 'removed';
  /** Explicit step name, if one was given. */
  name: string | undefined;
  /** The decorated method or property. */
  propertyKey: string;
  options: ResumableStepOptions;
}
