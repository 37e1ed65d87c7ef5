import type { PreparedStep } from '../runner/prepared-step.interface';

/** The attributes of a `geneva_drive.start` / `geneva_drive.signal` span: ids and names only. */
export type CallSpanAttributes = Readonly<Record<string, string | number>>;

/** A step attempt's span, ended by the tracer once the callback settles. */
export interface StepSpan {
  /** `geneva_drive.outcome`, and on `error` the error status and an exception event. */
  end(outcome: string, error: Error | null): void;
}

/**
 * Spans of the engine (SPEC §16.6). With `tracing` off the runner and service talk to the no-op
 * implementation, which allocates nothing; `OpenTelemetryWorkflowTracer` is loaded only when on.
 */
export abstract class WorkflowTracer {
  abstract readonly enabled: boolean;

  /**
   * Runs `fn` in a span (`geneva_drive.start`, `geneva_drive.signal`); `fn` gets the span's W3C
   * traceparent (null when off) for the workflow row. A rejection marks the span failed.
   */
  abstract inCallSpan<T>(
    name: string,
    attributes: CallSpanAttributes,
    fn: (traceParent: string | null) => Promise<T>,
  ): Promise<T>;

  /**
   * Runs one step attempt in a `geneva_drive.step` span linked to the workflow's `start()` span;
   * `fn` reports the outcome through `span.end()`.
   */
  abstract inStepSpan<T>(prepared: PreparedStep, fn: (span: StepSpan) => Promise<T>): Promise<T>;
}
