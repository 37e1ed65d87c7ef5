import { GenevaDriveError } from './geneva-drive.error';

/**
 * What a `waitFor` step "throws" when its `timeout` passes with no matching signal: the engine
 * hands it to `onTimeout` (or the step's exception policy) without running the step body.
 */
export class SignalWaitTimeoutError extends GenevaDriveError {
  override readonly name: string = 'SignalWaitTimeoutError';

  constructor(
    readonly stepName: string,
    /** The awaited signal's name; null for a custom matcher without one. */
    readonly signalName: string | null,
    readonly waitingSince: Date,
    readonly deadline: Date,
  ) {
    super(
      `Step '${stepName}' waited for ${signalName === null ? 'a matching signal' : `signal '${signalName}'`} ` +
        `from ${waitingSince.toISOString()} until its timeout at ${deadline.toISOString()}; no signal came.`,
    );
  }
}
