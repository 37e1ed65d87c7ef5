export * from './cls-context.bridge';
export * from './cls-context.provider';
export * from './workflow-tracer';
export * from './workflow-tracer.provider';
