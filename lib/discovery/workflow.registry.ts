import { Injectable, type Type } from '@nestjs/common';
import { StepConfigurationError } from '../errors/step-configuration.error';
import type { WorkflowRef } from '../interfaces/workflow-service.interface';
import type { WorkflowDefinition } from './workflow-definition.interface';

/** Holds the validated workflow definitions, by registered name and by class. */
@Injectable()
export class WorkflowRegistry {
  private readonly byName = new Map<string, WorkflowDefinition>();
  private readonly byClass = new Map<Type<object>, WorkflowDefinition>();

  register(definition: WorkflowDefinition): void {
    const existing = this.byName.get(definition.name);
    if (existing) {
      throw new StepConfigurationError(
        `Workflow name '${definition.name}' is registered by both ${existing.target.name} and ${definition.target.name}. ` +
          'Give one of them another name with @Workflow({ name }).',
      );
    }
    this.byName.set(definition.name, definition);
    this.byClass.set(definition.target, definition);
  }

  /** The definition stored under a `type` column value, if its class is still registered. */
  findByName(name: string): WorkflowDefinition | undefined {
    return this.byName.get(name);
  }

  /** Resolves a class or registered name, or throws `StepConfigurationError`. */
  resolve(ref: WorkflowRef): WorkflowDefinition {
    const definition = typeof ref === 'string' ? this.byName.get(ref) : this.byClass.get(ref);
    if (!definition) {
      const label = typeof ref === 'string' ? ref : ref?.name;
      throw new StepConfigurationError(
        `No workflow registered as '${label}'. Decorate the class with @Workflow() and list it in a module's providers.`,
      );
    }
    return definition;
  }

  all(): WorkflowDefinition[] {
    return [...this.byName.values()];
  }
}
