export * from './step-collection';
export * from './step-definition.interface';
export * from './workflow-definition.interface';
export * from './workflow-metadata.accessor';
export * from './workflow.explorer';
export * from './workflow.registry';
export * from './readiness.watcher';
