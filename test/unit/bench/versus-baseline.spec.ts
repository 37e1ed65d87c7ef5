import type { BenchResult } from '../../../bench/support/result';
import { compareWithBaseline, mergeRounds } from '../../../bench/support/versus-baseline';

const machine = {} as BenchResult['machine'];

function line(
  name: string,
  parameters: Record<string, unknown>,
  runs: Array<Record<string, number>>,
): BenchResult {
  return { name, parameters, metrics: runs[0], runs, machine };
}

describe('benchmarks against a baseline commit', () => {
  it('folds the rounds of one benchmark and parameters together, medians over every run', () => {
    const merged = mergeRounds([
      line('throughput', { concurrency: 8 }, [{ stepsPerSecond: 100 }, { stepsPerSecond: 300 }]),
      line('throughput', { concurrency: 32 }, [{ stepsPerSecond: 50 }]),
      line('throughput', { concurrency: 8 }, [{ stepsPerSecond: 200 }]),
    ]);
    expect(merged).toHaveLength(2);
    expect(merged[0]).toMatchObject({
      parameters: { concurrency: 8 },
      metrics: { stepsPerSecond: 200 },
      runs: [{ stepsPerSecond: 100 }, { stepsPerSecond: 300 }, { stepsPerSecond: 200 }],
    });
    expect(merged[1].metrics).toEqual({ stepsPerSecond: 50 });
  });

  it('sets each figure beside the baseline result of the same parameters, with its ratio', () => {
    const figures = compareWithBaseline(
      [line('flatness', { steps: 10 }, [{ deepToFreshRatio: 1.2, onlyHere: 1 }])],
      [
        line('flatness', { steps: 20 }, [{ deepToFreshRatio: 9 }]),
        line('flatness', { steps: 10 }, [{ deepToFreshRatio: 1 }]),
      ],
    );
    expect(figures).toEqual([
      {
        benchmark: 'flatness',
        parameters: { steps: 10 },
        metric: 'deepToFreshRatio',
        current: 1.2,
        baseline: 1,
        ratio: 1.2,
      },
    ]);
  });

  it('holds throughput down to 0.95 × the baseline and hop up to 1.05 ×, and no further', () => {
    const held = (name: string, metric: string, current: number) =>
      compareWithBaseline(
        [line(name, {}, [{ [metric]: current }])],
        [line(name, {}, [{ [metric]: 100 }])],
      )[0].held;
    expect(held('throughput', 'stepsPerSecond', 95)).toBe(true);
    expect(held('throughput', 'stepsPerSecond', 94)).toBe(false);
    expect(held('hop', 'msPerStep', 105)).toBe(true);
    expect(held('hop', 'msPerStep', 106)).toBe(false);
    expect(held('hop', 'stepsPerSecond', 50)).toBeUndefined();
  });
});
