import type { Type } from '@nestjs/common';
import type { EntityTarget, ObjectLiteral } from 'typeorm';
import type { StepJobOptions } from '../interfaces/job-options.interface';
import type { ExceptionPolicy } from '../api/exception-policy';
import type { StepCollection } from './step-collection';

/** A validated, discovered workflow class with its DI instance. */
export interface WorkflowDefinition {
  readonly name: string;
  readonly target: Type<object>;
  readonly instance: object;
  readonly hero: (() => EntityTarget<ObjectLiteral>) | null;
  readonly mayProceedWithoutHero: boolean;
  readonly stepJobOptions: StepJobOptions;
  /** Class-level policies in declaration order (parents first). */
  readonly policies: readonly ExceptionPolicy[];
  /** `@CancelIf` method names (parents first). */
  readonly cancelIfMethods: readonly string[];
  readonly steps: StepCollection;
}
