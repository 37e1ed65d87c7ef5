import type { StepDefinition } from './step-definition.interface';

/**
 * The ordered steps of one workflow class. Unpositioned steps keep declaration order; each
 * `beforeStep`/`afterStep` step is then inserted, in declaration order, next to its target.
 */
export class StepCollection {
  /** All steps, removed ones included, in run order. */
  readonly ordered: readonly StepDefinition[];
  private readonly byName: ReadonlyMap<string, StepDefinition>;
  /** The first runnable step after each step (null after the last). */
  private readonly nextByName: ReadonlyMap<string, StepDefinition | null>;
  private readonly first: StepDefinition | null;

  constructor(definitions: readonly StepDefinition[]) {
    const ordered = definitions.filter((step) => !step.beforeStep && !step.afterStep);
    for (const step of definitions) {
      const target = step.beforeStep ?? step.afterStep;
      if (!target) continue;
      const index = ordered.findIndex((candidate) => candidate.name === target);
      ordered.splice(step.beforeStep ? index : index + 1, 0, step);
    }
    this.ordered = ordered;
    this.byName = new Map(definitions.map((step) => [step.name, step]));
    // Asked once or twice per step run: answered from a table, not a scan of the steps.
    let following: StepDefinition | null = null;
    const next = new Map<string, StepDefinition | null>();
    for (let index = ordered.length - 1; index >= 0; index--) {
      next.set(ordered[index].name, following);
      if (ordered[index].kind !== 'removed') following = ordered[index];
    }
    this.nextByName = next;
    this.first = following;
  }

  /** Steps that can run (gravestones left out), in run order. */
  get runnable(): StepDefinition[] {
    return this.ordered.filter((step) => step.kind !== 'removed');
  }

  /** Gravestones only. */
  get removed(): StepDefinition[] {
    return this.ordered.filter((step) => step.kind === 'removed');
  }

  named(name: string): StepDefinition | undefined {
    return this.byName.get(name);
  }

  /** The first runnable step after `name` (the first runnable step for null); null at the end. */
  nextAfter(name: string | null): StepDefinition | null {
    if (name === null) return this.first;
    return this.nextByName.get(name) ?? null;
  }

  /** The runnable step before `name`; null for the first or an unknown name. */
  previousBefore(name: string): StepDefinition | null {
    const index = this.indexOf(name);
    if (index <= 0) return null;
    return (
      this.ordered
        .slice(0, index)
        .reverse()
        .find((step) => step.kind !== 'removed') ?? null
    );
  }

  private indexOf(name: string): number {
    return this.ordered.findIndex((step) => step.name === name);
  }
}
