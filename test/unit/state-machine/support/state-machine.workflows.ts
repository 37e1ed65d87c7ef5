import { Injectable } from '@nestjs/common';
import {
  CancelIf,
  RemovedStep,
  Step,
  Workflow,
  type StepContext,
  type WorkflowContext,
} from '../../../../lib';

/** A plain hero: the in-memory repository identifies it as `('Customer', String(id))`. */
export class Customer {
  private static lastId = 0;
  readonly id = ++Customer.lastId;

  constructor(public status = 'active') {}
}

type StepBehavior = (ctx: StepContext<Customer>) => unknown;

/**
 * What each step body does, planned per hero by the test, and a record of every body that ran
 * (with the payload of the signal it received).
 */
@Injectable()
export class StepScript {
  private readonly plans = new Map<number, Record<string, StepBehavior>>();
  readonly calls: Array<{ heroId: number; step: string; payload: unknown }> = [];

  plan(hero: Customer, behaviors: Record<string, StepBehavior>): void {
    this.plans.set(hero.id, { ...this.plans.get(hero.id), ...behaviors });
  }

  async run(ctx: StepContext<Customer>): Promise<void> {
    this.calls.push({
      heroId: ctx.hero.id,
      step: ctx.stepName,
      payload: ctx.receivedSignal?.payload,
    });
    await this.plans.get(ctx.hero.id)?.[ctx.stepName]?.(ctx);
  }

  /** The steps whose bodies ran for the hero, in order. */
  callsFor(hero: Customer): string[] {
    return this.calls.filter((call) => call.heroId === hero.id).map((call) => call.step);
  }

  /** The payloads the hero's step bodies received, in order. */
  payloadsFor(hero: Customer): unknown[] {
    return this.calls.filter((call) => call.heroId === hero.id).map((call) => call.payload);
  }
}

/** a → b → c, canceled when the hero is `void`, `b` skipped when the hero is `skip-b`. */
@Workflow({ hero: () => Customer })
export class LinearWorkflow {
  constructor(private readonly script: StepScript) {}

  @CancelIf() voided(ctx: WorkflowContext<Customer>) {
    return ctx.hero.status === 'void';
  }

  @Step() a(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }

  @Step({ skipIf: (ctx: WorkflowContext<Customer>) => ctx.hero.status === 'skip-b' })
  b(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }

  @Step() c(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }
}

/** a, a gravestone where `legacy` used to be, c. */
@Workflow({ hero: () => Customer })
export class GravestoneWorkflow {
  constructor(private readonly script: StepScript) {}

  @Step() a(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }

  @RemovedStep('legacy') legacy?: never;

  @Step() c(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }
}

/** `risky` under the default policy (pause), then `after`. */
@Workflow({ hero: () => Customer })
export class PausingPolicyWorkflow {
  constructor(private readonly script: StepScript) {}

  @Step() risky(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }

  @Step() after(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }
}

@Workflow({ hero: () => Customer })
export class CancelingPolicyWorkflow {
  constructor(private readonly script: StepScript) {}

  @Step({ onException: 'cancel' }) risky(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }

  @Step() after(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }
}

@Workflow({ hero: () => Customer })
export class SkippingPolicyWorkflow {
  constructor(private readonly script: StepScript) {}

  @Step({ onException: 'skip' }) risky(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }

  @Step() after(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }
}

/** Two reattempts at most, then cancel (not the default pause, so the terminal action shows). */
@Workflow({ hero: () => Customer })
export class ReattemptingPolicyWorkflow {
  constructor(private readonly script: StepScript) {}

  @Step({ onException: 'reattempt', maxReattempts: 2, terminalAction: 'cancel' })
  risky(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }

  @Step() after(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }
}

/** An immediate step, then one due in an hour. */
@Workflow({ hero: () => Customer })
export class DelayedNextWorkflow {
  constructor(private readonly script: StepScript) {}

  @Step() one(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }

  @Step({ wait: '1h' }) later(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }
}

/** prepare → wait for `payment` → ship. */
@Workflow({ hero: () => Customer })
export class PaymentWorkflow {
  constructor(private readonly script: StepScript) {}

  @Step() prepare(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }

  @Step({ waitFor: 'payment' }) capture(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }

  @Step() ship(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }
}

/** Two consecutive steps waiting for a signal of the same name: each consumes its own. */
@Workflow({ hero: () => Customer })
export class TwoApprovalsWorkflow {
  constructor(private readonly script: StepScript) {}

  @Step({ waitFor: 'approval' }) first(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }

  @Step({ waitFor: 'approval' }) second(ctx: StepContext<Customer>) {
    return this.script.run(ctx);
  }
}

/** Every workflow of this directory's tests. */
/** No step at all: `start()` and `startMany()` finish it at once. */
@Workflow({ hero: () => Customer })
export class StepLessWorkflow {}

export const STATE_MACHINE_WORKFLOWS = [
  LinearWorkflow,
  StepLessWorkflow,
  GravestoneWorkflow,
  PausingPolicyWorkflow,
  CancelingPolicyWorkflow,
  SkippingPolicyWorkflow,
  ReattemptingPolicyWorkflow,
  DelayedNextWorkflow,
  PaymentWorkflow,
  TwoApprovalsWorkflow,
];
