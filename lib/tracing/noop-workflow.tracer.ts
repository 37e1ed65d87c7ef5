import type { PreparedStep } from '../runner/prepared-step.interface';
import { WorkflowTracer, type CallSpanAttributes, type StepSpan } from './workflow-tracer';

const NOOP_SPAN: StepSpan = { end: () => undefined };

/** `tracing` off: calls straight through, nothing allocated, `@opentelemetry/api` never loaded. */
export class NoopWorkflowTracer extends WorkflowTracer {
  readonly enabled = false;

  inCallSpan<T>(
    _name: string,
    _attributes: CallSpanAttributes,
    fn: (traceParent: string | null) => Promise<T>,
  ): Promise<T> {
    return fn(null);
  }

  inStepSpan<T>(_prepared: PreparedStep, fn: (span: StepSpan) => Promise<T>): Promise<T> {
    return fn(NOOP_SPAN);
  }
}
