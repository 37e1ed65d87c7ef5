import { Injectable, type Type } from '@nestjs/common';
import { CANCEL_IF_METADATA, STEPS_METADATA, WORKFLOW_METADATA } from '../common/constants';
import type { RecordedStep } from '../decorators/recorded-step.interface';
import type { WorkflowOptions } from '../interfaces/workflow-options.interface';

/** The only reader of decorator metadata: knows the keys and how inheritance combines them. */
@Injectable()
export class WorkflowMetadataAccessor {
  isWorkflow(target: object): boolean {
    return Reflect.hasOwnMetadata(WORKFLOW_METADATA, target);
  }

  /** Own options merged over the parents' (`stepJobOptions` merged key by key, policies appended). */
  getWorkflowOptions(target: Type<object>): WorkflowOptions {
    return this.lineage(target).reduce<WorkflowOptions>((merged, cls) => {
      const own = Reflect.getOwnMetadata(WORKFLOW_METADATA, cls) as WorkflowOptions | undefined;
      if (!own) return merged;
      const ownPolicies = own.onException === undefined ? [] : [own.onException].flat();
      const parentPolicies = merged.onException === undefined ? [] : [merged.onException].flat();
      return {
        ...merged,
        ...own,
        name: cls === target ? own.name : merged.name,
        // Only objects merge key by key; anything else is kept as given for the explorer to refuse.
        stepJobOptions: isRecord(own.stepJobOptions)
          ? {
              ...(isRecord(merged.stepJobOptions) ? merged.stepJobOptions : {}),
              ...own.stepJobOptions,
            }
          : (own.stepJobOptions ?? merged.stepJobOptions),
        onException: [...parentPolicies, ...ownPolicies],
      };
    }, {});
  }

  /** The `@Workflow(options)` argument of the class and of each decorated ancestor, base first, as given. */
  getDeclaredWorkflowOptions(
    target: Type<object>,
  ): Array<{ target: Type<object>; options: unknown }> {
    return this.lineage(target)
      .filter((cls) => Reflect.hasOwnMetadata(WORKFLOW_METADATA, cls))
      .map((cls) => ({
        target: cls,
        options: Reflect.getOwnMetadata(WORKFLOW_METADATA, cls) as unknown,
      }));
  }

  /**
   * Static members of the class or its ancestors decorated with `@Step`, `@ResumableStep`,
   * `@RemovedStep` or `@CancelIf`: a member decorator on a static member records on the class
   * instead of its prototype, where nothing reads it.
   */
  getStaticallyDecoratedMembers(target: Type<object>): string[] {
    return this.lineage(target).flatMap((cls) => [
      ...((Reflect.getOwnMetadata(STEPS_METADATA, cls) as RecordedStep[] | undefined) ?? []).map(
        (step) => `${cls.name}.${step.propertyKey}`,
      ),
      ...((Reflect.getOwnMetadata(CANCEL_IF_METADATA, cls) as string[] | undefined) ?? []).map(
        (name) => `${cls.name}.${name}`,
      ),
    ]);
  }

  /** Recorded steps, parents first, each class in declaration order. */
  getRecordedSteps(target: Type<object>): RecordedStep[] {
    return this.lineage(target).flatMap(
      (cls) =>
        (Reflect.getOwnMetadata(STEPS_METADATA, cls.prototype as object) as
          RecordedStep[] | undefined) ?? [],
    );
  }

  getCancelIfMethods(target: Type<object>): string[] {
    return this.lineage(target).flatMap(
      (cls) =>
        (Reflect.getOwnMetadata(CANCEL_IF_METADATA, cls.prototype as object) as
          string[] | undefined) ?? [],
    );
  }

  /** The class and its ancestors, base class first. */
  private lineage(target: Type<object>): Array<Type<object>> {
    const chain: Array<Type<object>> = [];
    for (let cls: unknown = target; typeof cls === 'function' && cls !== Function.prototype;) {
      chain.unshift(cls as Type<object>);
      cls = Object.getPrototypeOf(cls);
    }
    return chain;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
