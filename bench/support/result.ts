import { machineInfo, type MachineInfo } from './machine';
import { medians } from './stats';

/** One numeric figure per metric name. */
export type Metrics = Record<string, number>;

/** What each benchmark prints, one JSON line per result, and `npm run bench` collects. */
export interface BenchResult {
  name: string;
  parameters: Record<string, unknown>;
  /** The median of each metric over `runs`. */
  metrics: Metrics;
  runs: Metrics[];
  machine: MachineInfo;
  /** Findings that are not numbers (statement lists, query plans). */
  details?: Record<string, unknown>;
}

/** Runs `runOnce` `count` times, one after the other, and resolves each run's metrics. */
export async function repeatRuns(
  count: number,
  runOnce: (index: number) => Promise<Metrics>,
): Promise<Metrics[]> {
  const runs: Metrics[] = [];
  for (let index = 0; index < count; index++) runs.push(await runOnce(index));
  return runs;
}

/** Prints the result of `runs` as one JSON line on stdout (metrics: their medians). */
export async function emit(
  name: string,
  parameters: Record<string, unknown>,
  runs: Metrics[],
  details?: Record<string, unknown>,
): Promise<BenchResult> {
  const result: BenchResult = {
    name,
    parameters,
    metrics: medians(runs),
    runs,
    machine: await machineInfo(),
  };
  if (details) result.details = details;
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return result;
}
