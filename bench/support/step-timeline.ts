/**
 * When each step body of each chain (a workflow, or a raw BullMQ job chain) started and ended,
 * by `performance.now()`. Recorded inside the bodies, so what lies between two steps of a chain
 * is exactly what the engine (or the transport) adds.
 */
export class StepTimeline {
  private readonly chains = new Map<string, { starts: number[]; ends: number[] }>();

  record(chain: string, index: number, startedAt: number, endedAt: number): void {
    let times = this.chains.get(chain);
    if (!times) {
      times = { starts: [], ends: [] };
      this.chains.set(chain, times);
    }
    times.starts[index] = startedAt;
    times.ends[index] = endedAt;
  }

  clear(): void {
    this.chains.clear();
  }

  /** Over every chain: start of step k+1 − end of step k. */
  gaps(): number[] {
    return [...this.chains.values()].flatMap(({ starts, ends }) =>
      starts.slice(1).map((start, k) => start - ends[k]),
    );
  }

  /** When each step body of `chain` started, by step index. */
  starts(chain: string): number[] {
    return [...(this.chains.get(chain)?.starts ?? [])];
  }
}
