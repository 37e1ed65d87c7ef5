import { Processor, WorkerHost } from '@nestjs/bullmq';
import type { Type } from '@nestjs/common';
import type { Job } from 'bullmq';
import { GENEVA_DRIVE_BULL_CONFIG_KEY } from '../../common/constants';
import { WorkflowRunner } from '../../runner/workflow.runner';
import type { StepJobData } from '../../queue/step-job.interface';
import { handleStepJob } from './step-job.handler';

/** Base of the per-queue processors: hands each job to the runner (a step, or a wait's timeout). */
export abstract class StepProcessor extends WorkerHost {
  constructor(private readonly runner: WorkflowRunner) {
    super();
  }

  process(job: Job<StepJobData>): Promise<void> {
    return handleStepJob(this.runner, job);
  }
}

/**
 * `@Processor` takes a static queue name, so the module generates one subclass per consumed
 * queue, decorated for that queue and its concurrency.
 */
export function createStepProcessor(queueName: string, concurrency: number): Type<StepProcessor> {
  class QueueStepProcessor extends StepProcessor {
    constructor(runner: WorkflowRunner) {
      super(runner);
    }
  }
  Object.defineProperty(QueueStepProcessor, 'name', {
    value: `GenevaDriveStepProcessor[${queueName}]`,
  });
  Reflect.defineMetadata('design:paramtypes', [WorkflowRunner], QueueStepProcessor);
  Processor(
    { name: queueName, configKey: GENEVA_DRIVE_BULL_CONFIG_KEY },
    { concurrency, autorun: false },
  )(QueueStepProcessor);
  return QueueStepProcessor;
}
