/**
 * Thrown at a checkpoint (or by `skipTo`) to stop a resumable step; the runner ends the execution
 * `completed/continued` and a successor continues from the cursor. Recorded on the iterable step
 * too, so it is honored even when user code swallows it.
 */
export class StepInterruption extends Error {
  override readonly name = 'StepInterruption';

  constructor(
    readonly reason: string,
    /** Delay before the successor runs, in ms; null = now. */
    readonly waitMs: number | null,
  ) {
    super(
      `Resumable step interrupted (${reason}); a successor continues from the cursor. Do not catch this.`,
    );
  }
}
