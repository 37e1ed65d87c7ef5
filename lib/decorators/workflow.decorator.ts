import { Injectable } from '@nestjs/common';
import { INJECTABLE_WATERMARK } from '@nestjs/common/constants';
import { WORKFLOW_METADATA } from '../common/constants';
import type { WorkflowOptions } from '../interfaces/workflow-options.interface';

/**
 * Declares a workflow class. It is a provider (this decorator applies `@Injectable()`); list it in
 * a module's `providers` and it is discovered and validated at boot.
 */
export function Workflow(options: WorkflowOptions = {}): ClassDecorator {
  return (target) => {
    // Keep an explicit @Injectable({ scope }) so the explorer can refuse request scope.
    if (!Reflect.hasOwnMetadata(INJECTABLE_WATERMARK, target)) Injectable()(target);
    Reflect.defineMetadata(WORKFLOW_METADATA, options, target);
  };
}
