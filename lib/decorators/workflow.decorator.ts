import { Injectable } from '@nestjs/common';
import { WORKFLOW_METADATA } from '../common/constants';
import type { WorkflowOptions } from '../interfaces/workflow-options.interface';

/**
 * The metadata keys `@Injectable()` writes, learnt from a probe class: NestJS exports the decorator,
 * not its keys (they live in a private module of `@nestjs/common`).
 */
const INJECTABLE_KEYS: readonly unknown[] = (() => {
  class Probe {}
  Injectable()(Probe);
  return Reflect.getOwnMetadataKeys(Probe) as unknown[];
})();

function isInjectable(target: object): boolean {
  const keys = Reflect.getOwnMetadataKeys(target) as unknown[];
  return INJECTABLE_KEYS.every((key) => keys.includes(key));
}

/**
 * Declares a workflow class. It is a provider (this decorator applies `@Injectable()`); list it in
 * a module's `providers` and it is discovered and validated at boot.
 */
export function Workflow(options: WorkflowOptions = {}): ClassDecorator {
  return (target) => {
    // Keep an explicit @Injectable({ scope }) so the explorer can refuse request scope.
    if (!isInjectable(target)) Injectable()(target);
    Reflect.defineMetadata(WORKFLOW_METADATA, options, target);
  };
}
