export * from './workflow.decorator';
export * from './step.decorator';
export * from './resumable-step.decorator';
export * from './removed-step.decorator';
export * from './cancel-if.decorator';
