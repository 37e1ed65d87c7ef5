import type { BenchResult } from '../../../bench/support/result';
import { checkComparisons, checkTargets } from '../../../bench/support/targets';

const machine = {} as BenchResult['machine'];

function line(name: string, parameters: Record<string, unknown>, metrics: Record<string, number>) {
  return { name, parameters, metrics, runs: [metrics], machine } satisfies BenchResult;
}

const wake = { wakeups: 500 };

describe('benchmark targets against DBOS Transact', () => {
  it('says whether what bounds a figure leaves its target within reach', () => {
    const checks = checkComparisons([
      line('signal-wake', { ...wake, concurrency: 10 }, { callP50Ms: 1.2, callDatabaseP50Ms: 0.9 }),
      line('dbos-signal-wake', wake, { callP50Ms: 0.45 }),
      line('hop', { workflows: 1, steps: 200 }, { msPerStep: 0.8, commitRoundTripP50Ms: 0.3 }),
      line('dbos-hop', { workflows: 1, steps: 200 }, { msPerStep: 1.4 }),
    ]);
    const call = checks.find((check) => check.metric === 'callP50Ms');
    expect(call).toMatchObject({
      ratio: 2.67,
      met: false,
      reach: { value: 0.9, ratio: 2, reachable: false },
    });
    const hop = checks.find((check) => check.metric === 'msPerStep');
    expect(hop).toMatchObject({ met: false, reach: { value: 0.3, ratio: 0.21, reachable: true } });
  });

  it('leaves the reach out when the bound was not measured, and for unbounded figures', () => {
    const checks = checkComparisons([
      line('signal-wake', wake, { callP50Ms: 0.4, fromCallP50Ms: 2 }),
      line('dbos-signal-wake', wake, { callP50Ms: 0.45, fromCallP50Ms: 3 }),
    ]);
    expect(checks.map((check) => [check.metric, check.met, check.reach])).toEqual([
      ['fromCallP50Ms', true, undefined],
      ['callP50Ms', true, undefined],
    ]);
  });

  it('checks the CPU per step of each throughput line against 0.75 ms', () => {
    const checks = checkTargets([
      line('throughput', { concurrency: 8 }, { stepsPerSecond: 2000, cpuMsPerStep: 0.76 }),
      line('throughput', { concurrency: 32 }, { stepsPerSecond: 2000, cpuMsPerStep: 0.75 }),
    ]).filter((check) => check.metric === 'cpuMsPerStep');
    expect(checks.map((check) => [check.parameters.concurrency, check.met])).toEqual([
      [8, false],
      [32, true],
    ]);
  });

  it("says whether the start-many ratio's bound leaves 20× within reach", () => {
    const [short, reachable, unbounded] = checkTargets([
      line('start-many', { batch: 1000 }, { ratio: 12.5, ratioBound: 17.9 }),
      line('start-many', { batch: 1000 }, { ratio: 12.5, ratioBound: 20 }),
      line('start-many', { batch: 1000 }, { ratio: 21 }),
    ]).filter((check) => check.metric === 'ratio');
    expect(short).toMatchObject({ met: false, reach: { value: 17.9, reachable: false } });
    expect(reachable).toMatchObject({ met: false, reach: { value: 20, reachable: true } });
    expect(unbounded).toMatchObject({ met: true });
    expect(unbounded.reach).toBeUndefined();
  });
});
