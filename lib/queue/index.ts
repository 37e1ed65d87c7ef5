export * from './step-job.interface';
export * from './step-job.queue';
