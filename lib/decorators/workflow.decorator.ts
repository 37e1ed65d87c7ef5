import { Injectable } from '@nestjs/common';
import { WORKFLOW_METADATA } from '../constants';
import type { WorkflowOptions } from '../interfaces/workflow-options.interface';

/**
 * Declares a workflow class. It is a provider (this decorator applies `@Injectable()`); list it in
 * a module's `providers` and it is discovered and validated at boot.
 */
export function Workflow(options: WorkflowOptions = {}): ClassDecorator {
  return (target) => {
    Injectable()(target);
    Reflect.defineMetadata(WORKFLOW_METADATA, options, target);
  };
}
