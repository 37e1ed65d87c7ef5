import type { LoggerService, Type } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  InMemoryWorkflowRepository,
  type InMemoryWorkflowRepositoryOptions,
} from '../../../../lib/adapters/memory/in-memory-workflow.repository';
import type { SignalEntity } from '../../../../lib/entities/signal.entity';
import type { StepExecutionEntity } from '../../../../lib/entities/step-execution.entity';
import type { WorkflowEntity } from '../../../../lib/entities/workflow.entity';
import type {
  ErrorReportContext,
  GenevaDriveModuleOptions,
} from '../../../../lib/interfaces/module-options.interface';
import { resolveModuleOptions } from '../../../../lib/options/resolve-module-options';
import { GENEVA_DRIVE_RESOLVED_OPTIONS } from '../../../../lib/options/resolved-options.token';
import {
  WorkflowRepository,
  type RepositoryTransaction,
} from '../../../../lib/ports/workflow.repository';
import { GENEVA_DRIVE_ENGINE_PROVIDERS } from '../../../../lib/geneva-drive.providers';
import { StepJobQueue } from '../../../../lib/queue/step-job.queue';
import { WorkflowRunner } from '../../../../lib/runner/workflow.runner';
import { WorkflowService } from '../../../../lib/service/workflow.service';
import type { EnqueuedJob } from '../../../../lib/testing/enqueued-job.interface';
import { InMemoryStepJobQueue } from '../../../../lib/testing/in-memory-step-job.queue';
import { GENEVA_DRIVE_TESTING_OPTIONS } from '../../../../lib/testing/testing-options.token';
import { Customer, STATE_MACHINE_WORKFLOWS, StepScript } from './state-machine.workflows';

/** A LoggerService that keeps what it is told. */
class RecordingLogger implements LoggerService {
  readonly lines: string[] = [];
  log(message: unknown) {
    this.lines.push(`log: ${String(message)}`);
  }
  warn(message: unknown) {
    this.lines.push(`warn: ${String(message)}`);
  }
  error(message: unknown) {
    this.lines.push(`error: ${String(message)}`);
  }
}

/**
 * The real engine (discovery, runner, signals, service) on an `InMemoryWorkflowRepository`, with
 * the testing module's in-process queue recording the jobs the repository hands over after each
 * commit. Nothing runs by itself: a test runs each execution with `run()`.
 */
export class StateMachine {
  private constructor(
    readonly module: TestingModule,
    readonly repository: InMemoryWorkflowRepository,
    readonly logger: RecordingLogger,
    /** What the engine passed to `errorReporter`, oldest first. */
    readonly reports: Array<{ error: Error; context: ErrorReportContext }>,
  ) {}

  static async boot(
    options: GenevaDriveModuleOptions = {},
    repositoryOptions: InMemoryWorkflowRepositoryOptions = {},
  ): Promise<StateMachine> {
    const repository = new InMemoryWorkflowRepository(repositoryOptions);
    const logger = new RecordingLogger();
    const reports: Array<{ error: Error; context: ErrorReportContext }> = [];
    const resolved = resolveModuleOptions({
      housekeeping: { enabled: false },
      logger,
      errorReporter: (error, context) => {
        reports.push({ error, context });
      },
      ...options,
    });
    const module = await Test.createTestingModule({
      imports: [DiscoveryModule],
      providers: [
        { provide: GENEVA_DRIVE_RESOLVED_OPTIONS, useValue: resolved },
        { provide: GENEVA_DRIVE_TESTING_OPTIONS, useValue: { autoRun: false } },
        { provide: WorkflowRepository, useValue: repository },
        InMemoryStepJobQueue,
        { provide: StepJobQueue, useExisting: InMemoryStepJobQueue },
        ...GENEVA_DRIVE_ENGINE_PROVIDERS,
        StepScript,
        ...STATE_MACHINE_WORKFLOWS,
      ],
    })
      .setLogger(logger)
      .compile();
    await module.init();
    const queue = module.get(InMemoryStepJobQueue);
    repository.onCommittedJobs(async (jobs) => {
      for (const job of jobs) await queue.add(job);
    });
    return new StateMachine(module, repository, logger, reports);
  }

  get service(): WorkflowService {
    return this.module.get(WorkflowService);
  }

  get runner(): WorkflowRunner {
    return this.module.get(WorkflowRunner);
  }

  get script(): StepScript {
    return this.module.get(StepScript);
  }

  /** Registers the hero with the repository and starts the workflow for it. */
  async start(
    workflow: Type<object>,
    hero = new Customer(),
  ): Promise<{ workflow: WorkflowEntity; hero: Customer }> {
    this.repository.registerHero('Customer', hero.id, hero);
    return { workflow: await this.service.start(workflow, { hero }), hero };
  }

  async find(workflow: WorkflowEntity): Promise<WorkflowEntity> {
    const found = await this.service.find(workflow.id);
    if (!found) throw new Error(`workflow ${workflow.id} is gone`);
    return found;
  }

  history(workflow: WorkflowEntity): Promise<StepExecutionEntity[]> {
    return this.service.executionHistory(workflow.id);
  }

  /** `step:state/outcome` for each execution, oldest first. */
  async trace(workflow: WorkflowEntity): Promise<string[]> {
    return (await this.history(workflow)).map((e) => `${e.stepName}:${e.state}/${e.outcome}`);
  }

  async current(workflow: WorkflowEntity): Promise<StepExecutionEntity> {
    const execution = await this.service.currentExecution(workflow.id);
    if (!execution) throw new Error(`workflow ${workflow.id} has no current execution`);
    return execution;
  }

  signals(workflow: WorkflowEntity): Promise<SignalEntity[]> {
    return this.service.signals(workflow.id);
  }

  /** Runs the execution as its job would (`performStep`), without step chaining. */
  run(execution: StepExecutionEntity | string): Promise<void> {
    return this.runner.performStep(typeof execution === 'string' ? execution : execution.id);
  }

  /** Runs the workflow's current execution; resolves to it (as it was before running). */
  async runCurrent(workflow: WorkflowEntity): Promise<StepExecutionEntity> {
    const execution = await this.current(workflow);
    await this.run(execution);
    return execution;
  }

  /**
   * Changes stored rows behind the engine's back (what an old deploy or an operator's SQL would
   * have left), in one transaction under the workflow lock.
   */
  edit(
    workflow: WorkflowEntity,
    change: (tx: RepositoryTransaction, locked: WorkflowEntity) => Promise<void>,
  ): Promise<void> {
    return this.repository.transaction(async (tx) => {
      const locked = await this.repository.lockWorkflow(tx, workflow.id);
      if (!locked) throw new Error(`workflow ${workflow.id} is gone`);
      await change(tx, locked);
    });
  }

  /** Every job the queue received, oldest first. */
  jobs(): EnqueuedJob[] {
    return this.module.get(InMemoryStepJobQueue).recorded();
  }

  jobsFor(execution: StepExecutionEntity): EnqueuedJob[] {
    return this.jobs().filter((job) => job.stepExecutionId === execution.id);
  }

  async close(): Promise<void> {
    await this.module.close();
    expect(this.repository.openTransactionCount).toBe(0);
  }
}

/** The rejection of `promise` (fails the test if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the promise to reject, but it resolved');
}
