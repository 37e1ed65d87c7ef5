import type { Metrics } from './result';
import { percentile, round } from './stats';
import type { StepTimeline } from './step-timeline';

/** Rate and step-to-step gaps of a run of chains that took `elapsedMs` for `totalSteps` steps. */
export function chainMetrics(
  totalSteps: number,
  elapsedMs: number,
  timeline: StepTimeline,
): Metrics {
  const gaps = timeline.gaps();
  return {
    stepsPerSecond: round((totalSteps / elapsedMs) * 1000, 1),
    msPerStep: round(elapsedMs / totalSteps),
    gapP50Ms: round(percentile(gaps, 50)),
    gapP99Ms: round(percentile(gaps, 99)),
  };
}
