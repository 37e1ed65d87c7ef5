/** What a checkpoint asks before letting a resumable step go on. */
export interface InterruptionPolicy {
  /** The reason to stop after `iterations` checkpoints, or null to go on. */
  shouldInterrupt(iterations: number): Promise<string | null>;
}
