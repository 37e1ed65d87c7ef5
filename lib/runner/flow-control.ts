import type { Duration } from '../interfaces/states.interface';

/** A flow-control verb called from inside a step (or an imperative exception handler). */
export type FlowControlRequest =
  | { action: 'cancel' }
  | { action: 'pause' }
  | { action: 'skip' }
  | { action: 'finish' }
  | { action: 'reattempt'; wait?: Duration; rewind: boolean }
  | { action: 'suspend'; wait?: Duration };

/**
 * Thrown by the verbs to stop the step at once. The request is also recorded on the context, so
 * it is honored even when user code catches and swallows this.
 */
export class FlowControlSignal extends Error {
  override readonly name = 'FlowControlSignal';

  constructor(readonly request: FlowControlRequest) {
    super(`Flow control: ${request.action} (geneva-drive stops the step here; do not catch this)`);
  }
}
