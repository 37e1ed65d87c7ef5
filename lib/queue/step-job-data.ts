import type { StepJob, StepJobData } from './step-job.interface';

/** The data a transport stores with `job`: the ids, and the read-ahead hints when it has them. */
export function stepJobData(job: StepJob): StepJobData {
  const { stepExecutionId, workflowId, heroType, heroId, signalId } = job;
  return {
    stepExecutionId,
    workflowId,
    ...(heroType && heroId ? { heroType, heroId } : {}),
    ...(signalId ? { signalId } : {}),
  };
}
