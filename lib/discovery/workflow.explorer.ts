import { Injectable, type OnModuleInit, type Type } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { formatValue } from '../common/duration';
import { isPlainObject, storedStringProblem } from '../common/input-guards';
import { validateStepJobOptions } from '../common/step-job-options.validator';
import { StepConfigurationError } from '../errors/step-configuration.error';
import type { WorkflowOptions } from '../interfaces/workflow-options.interface';
import { ExceptionPolicy } from '../api/exception-policy';
import { ReadinessWatcher } from './readiness.watcher';
import { buildStepDefinitions } from './step-definition.factory';
import { StepCollection } from './step-collection';
import { WorkflowMetadataAccessor } from './workflow-metadata.accessor';
import { WorkflowRegistry } from './workflow.registry';

/** What `DiscoveryService.getProviders()` yields, named through its public signature only. */
type ProviderWrapper = ReturnType<DiscoveryService['getProviders']>[number];

const WORKFLOW_OPTION_KEYS = [
  'name',
  'hero',
  'mayProceedWithoutHero',
  'stepJobOptions',
  'onException',
];

/**
 * Discovers `@Workflow` providers at `onModuleInit`, validates every option, and fills the
 * registry. A bad option fails boot: a silently ignored workflow is worse than a crash.
 */
@Injectable()
export class WorkflowExplorer implements OnModuleInit {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly accessor: WorkflowMetadataAccessor,
    private readonly registry: WorkflowRegistry,
    private readonly readiness: ReadinessWatcher,
  ) {}

  onModuleInit(): void {
    try {
      for (const wrapper of this.discovery.getProviders()) this.explore(wrapper);
      this.readiness.markReady();
    } catch (error) {
      this.readiness.markFailed(error as Error);
      throw error;
    }
  }

  private explore(wrapper: ProviderWrapper): void {
    if (wrapper.isAlias) return;
    const target = this.classOf(wrapper);
    if (!target || !this.accessor.isWorkflow(target)) return;
    if (!wrapper.isDependencyTreeStatic() || wrapper.isTransient) {
      throw new StepConfigurationError(
        `Workflow ${target.name} is request-scoped or transient. Workflows run outside any request: make it a singleton provider (default scope).`,
      );
    }
    const instance = wrapper.instance as object | undefined;
    if (!instance) return;
    this.registry.register(this.define(target, instance));
  }

  private classOf(wrapper: ProviderWrapper): Type<object> | undefined {
    const instance = wrapper.instance as object | null | undefined;
    if (instance && typeof instance === 'object') return instance.constructor as Type<object>;
    const metatype = wrapper.metatype as unknown;
    return typeof metatype === 'function' && wrapper.inject === undefined
      ? (metatype as Type<object>)
      : undefined;
  }

  private define(target: Type<object>, instance: object) {
    for (const declared of this.accessor.getDeclaredWorkflowOptions(target)) {
      if (declared.options !== undefined && !isPlainObject(declared.options)) {
        throw new StepConfigurationError(
          `Workflow ${target.name}: @Workflow on ${declared.target.name} takes an options object ({ name?, hero?, mayProceedWithoutHero?, stepJobOptions?, onException? }), ` +
            `but got ${formatValue(declared.options)}. To name the workflow, write @Workflow({ name: ... }).`,
        );
      }
    }
    const options = this.accessor.getWorkflowOptions(target);
    const name = options.name ?? target.name;
    const fail = (problem: string) => new StepConfigurationError(`Workflow ${name}: ${problem}`);
    this.validateWorkflowOptions(options, fail);
    const statics = this.accessor.getStaticallyDecoratedMembers(target);
    if (statics.length > 0) {
      throw fail(
        `${statics.join(', ')} ${statics.length === 1 ? 'is a static member' : 'are static members'} decorated with a step or @CancelIf decorator, ` +
          'which only work on instance methods. Remove static.',
      );
    }
    let stepJobOptions;
    try {
      stepJobOptions = validateStepJobOptions(options.stepJobOptions, '@Workflow stepJobOptions');
    } catch (error) {
      throw fail((error as Error).message);
    }
    const prototype = target.prototype as Record<string, unknown>;
    const cancelIfMethods = this.accessor.getCancelIfMethods(target);
    const notMethod = cancelIfMethods.find((method) => typeof prototype[method] !== 'function');
    if (notMethod !== undefined) {
      throw fail(
        `@CancelIf decorates '${notMethod}', which is not a method. Put @CancelIf on a method (ctx) => boolean.`,
      );
    }
    const definitions = buildStepDefinitions(
      name,
      prototype,
      this.accessor.getRecordedSteps(target),
    );
    return {
      name,
      target,
      instance,
      hero: options.hero ?? null,
      mayProceedWithoutHero: options.mayProceedWithoutHero ?? false,
      stepJobOptions,
      policies: [options.onException ?? []].flat(),
      cancelIfMethods,
      steps: new StepCollection(definitions),
    };
  }

  private validateWorkflowOptions(
    options: WorkflowOptions,
    fail: (problem: string) => StepConfigurationError,
  ): void {
    const unknown = Object.keys(options).filter((key) => !WORKFLOW_OPTION_KEYS.includes(key));
    if (unknown.length > 0) {
      throw fail(
        `@Workflow has unknown option(s) ${unknown.join(', ')}. Allowed: ${WORKFLOW_OPTION_KEYS.join(', ')}.`,
      );
    }
    if (
      options.name !== undefined &&
      (typeof options.name !== 'string' || options.name.trim() === '')
    ) {
      throw fail(
        `@Workflow name must be a non-blank string, but was ${formatValue(options.name)}.`,
      );
    }
    // The name is stored in the `type` column (varchar(255) on MariaDB/MySQL).
    const nameProblem = options.name === undefined ? null : storedStringProblem(options.name);
    if (nameProblem) throw fail(`@Workflow name ${nameProblem}.`);
    if (options.hero !== undefined && typeof options.hero !== 'function') {
      throw fail(
        '@Workflow hero must be a function returning the hero entity, e.g. hero: () => Order.',
      );
    }
    if (
      options.mayProceedWithoutHero !== undefined &&
      typeof options.mayProceedWithoutHero !== 'boolean'
    ) {
      throw fail('@Workflow mayProceedWithoutHero must be a boolean.');
    }
    const bad = [options.onException ?? []]
      .flat()
      .find((policy) => !(policy instanceof ExceptionPolicy));
    if (bad !== undefined) {
      throw fail(
        `@Workflow onException holds ${formatValue(bad)}; it takes ExceptionPolicy instances only.`,
      );
    }
  }
}
