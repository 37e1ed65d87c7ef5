import type { Job } from 'bullmq';
import { EXPIRE_WAIT_JOB_NAME } from '../../common/constants';
import type { StepJobData } from '../../queue/step-job.interface';
import type { WorkflowRunner } from '../../runner/workflow.runner';

/** Hands a BullMQ job to the runner: a step, or a wait's timeout (whatever BullMQ's backend). */
export async function handleStepJob(runner: WorkflowRunner, job: Job<StepJobData>): Promise<void> {
  if (job.name === EXPIRE_WAIT_JOB_NAME) {
    await runner.expireWait(job.data);
    return;
  }
  await runner.performJob(job.data, {
    queue: job.queueName,
    priority: job.opts.priority || undefined,
  });
}
