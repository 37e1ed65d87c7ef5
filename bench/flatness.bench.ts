/**
 * `npm run bench:flatness`: whether a step's cost grows with the workflow's history. A deep
 * workflow of up to BENCH_FLAT_STEPS trivial steps (default 10,000) runs on a real app; when it
 * has 600 steps left, or after 80% of BENCH_FLAT_SECONDS (default 50), a fresh workflow of the
 * same class starts beside it. Once the fresh one has run 200 steps both finish. The deep
 * workflow's step period (start of step k+1 − start of step k) over that stretch is compared
 * with the fresh one's: both ran at the same time on the same machine, so a change of load
 * cancels out, and a ratio near 1 means the 10,000th step costs what the 1st does. One run: the
 * depth of the history is what matters, and it takes the whole time budget.
 */
import { performance } from 'node:perf_hooks';
import { Step, Workflow, type StepContext } from '../lib';
import { Order } from '../test/fixtures/order.entity';
import { createOrders } from './support/dataset';
import { bootEngine } from './support/engine';
import { envInteger } from './support/env';
import { FinishLine } from './support/finish-line';
import { runBenchmark } from './support/main';
import { emit } from './support/result';
import { median, round } from './support/stats';
import { StepTimeline } from './support/step-timeline';

const STEPS = envInteger('BENCH_FLAT_STEPS', 10_000);
const BUDGET_MS = envInteger('BENCH_FLAT_SECONDS', 50) * 1000;
/** Step periods of the fresh workflow compared with the deep one's over the same stretch. */
const WINDOW = 200;
const MIN_PERIODS = 20;

const timeline = new StepTimeline();
/** Shared with the step bodies: when the fresh workflow is due, and when both stop. */
const race = {
  freshDueAt: Infinity,
  freshId: '',
  stopAt: Infinity,
  requestFresh: () => {},
};

@Workflow({ name: 'FlatnessBenchWorkflow', hero: () => Order })
class FlatnessWorkflow {
  @Step({ repeat: { times: STEPS } })
  tick(ctx: StepContext<Order>) {
    const startedAt = performance.now();
    const index = Number(ctx.stepName.slice('tick_'.length)) - 1;
    timeline.record(ctx.workflow.id, index, startedAt, startedAt);
    if (startedAt >= race.stopAt) ctx.finish();
    if (ctx.workflow.id === race.freshId && index >= WINDOW) race.stopAt = startedAt;
    if (index >= STEPS - 3 * WINDOW || startedAt >= race.freshDueAt) race.requestFresh();
  }
}

/** The median step period of `chain` over the steps that started between `from` and `to`. */
function periodBetween(chain: string, from: number, to: number): { ms: number; periods: number } {
  const starts = timeline.starts(chain);
  const periods = starts
    .slice(1)
    .map((start, k) => ({ from: starts[k], ms: start - starts[k] }))
    .filter((period) => period.from >= from && period.from < to)
    .map((period) => period.ms);
  return { ms: median(periods), periods: periods.length };
}

runBenchmark(async () => {
  const harness = await bootEngine({ workflows: [FlatnessWorkflow] });
  const finishLine = new FinishLine();
  const unwatch = finishLine.watchEngine();
  try {
    const [deepHero, freshHero] = await createOrders(harness.dataSource, 2);
    const freshRequested = new Promise<void>((resolve) => (race.requestFresh = resolve));
    race.freshDueAt = performance.now() + 0.8 * BUDGET_MS;
    const deep = await harness.service.start(FlatnessWorkflow, { hero: deepHero });
    await freshRequested;
    const fresh = await harness.service.start(FlatnessWorkflow, { hero: freshHero });
    race.freshId = fresh.id;
    await finishLine.expect([deep.id, fresh.id]);

    const freshStarts = timeline.starts(fresh.id);
    const [from, to] = [freshStarts[0], freshStarts[freshStarts.length - 1]];
    const deepStretch = periodBetween(deep.id, from, to);
    const freshStretch = periodBetween(fresh.id, from, to);
    if (Math.min(deepStretch.periods, freshStretch.periods) < MIN_PERIODS) {
      throw new Error(
        `The workflows overlapped for ${deepStretch.periods} deep and ${freshStretch.periods} fresh steps: too few to compare.`,
      );
    }
    const deepSteps = timeline.starts(deep.id);
    const run = {
      depth: deepSteps.filter((start) => start < from).length,
      deepStepsRun: deepSteps.length,
      comparedPeriods: Math.min(deepStretch.periods, freshStretch.periods),
      deepMsPerStep: round(deepStretch.ms),
      freshMsPerStep: round(freshStretch.ms),
      deepToFreshRatio: round(deepStretch.ms / freshStretch.ms),
    };
    await emit('flatness', { maxSteps: STEPS, budgetSeconds: BUDGET_MS / 1000 }, [run]);
  } finally {
    unwatch();
    await harness.close();
  }
});
