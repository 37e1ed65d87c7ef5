import type * as OpenTelemetryApi from '@opentelemetry/api';
import type { PreparedStep } from '../runner/prepared-step.interface';
import { formatTraceParent, parseTraceParent } from './trace-parent';
import { WorkflowTracer, type CallSpanAttributes, type StepSpan } from './workflow-tracer';

/** The tracer name spans are created under (the package's name). */
const TRACER_NAME = 'nestjs-geneva-drive';

/**
 * Spans through the global `@opentelemetry/api` tracer provider. A step span is not a child of
 * the `start()` span but links to it: a workflow's steps may run days after the request that
 * started it. The step body runs with the step span active, so the user's spans nest under it.
 */
export class OpenTelemetryWorkflowTracer extends WorkflowTracer {
  readonly enabled = true;

  constructor(private readonly api: typeof OpenTelemetryApi) {
    super();
  }

  async inCallSpan<T>(
    name: string,
    attributes: CallSpanAttributes,
    fn: (traceParent: string | null) => Promise<T>,
  ): Promise<T> {
    const { trace, context, SpanKind } = this.api;
    const span = trace.getTracer(TRACER_NAME).startSpan(name, {
      kind: SpanKind.PRODUCER,
      attributes,
    });
    const spanContext = span.spanContext();
    const traceParent = trace.isSpanContextValid(spanContext)
      ? formatTraceParent(spanContext)
      : null;
    try {
      return await context.with(trace.setSpan(context.active(), span), () => fn(traceParent));
    } catch (error) {
      this.fail(span, error);
      throw error;
    } finally {
      span.end();
    }
  }

  async inStepSpan<T>(prepared: PreparedStep, fn: (span: StepSpan) => Promise<T>): Promise<T> {
    const { trace, context, SpanKind, ROOT_CONTEXT } = this.api;
    const { workflow, execution } = prepared;
    const attempt = execution.metadata?.attempt;
    const started = parseTraceParent(workflow.traceParent);
    const span = trace.getTracer(TRACER_NAME).startSpan(
      'geneva_drive.step',
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'geneva_drive.workflow.id': workflow.id,
          'geneva_drive.workflow.class': workflow.type,
          'geneva_drive.step.name': execution.stepName,
          'geneva_drive.execution.id': execution.id,
          'geneva_drive.attempt': typeof attempt === 'number' ? attempt : 1,
          ...(workflow.heroType !== null && { 'geneva_drive.hero.type': workflow.heroType }),
          ...(workflow.heroId !== null && { 'geneva_drive.hero.id': workflow.heroId }),
        },
        links: started ? [{ context: { ...started, isRemote: true } }] : [],
      },
      // A new trace: whatever context the job runner happens to carry is not the step's parent.
      ROOT_CONTEXT,
    );
    let ended = false;
    const handle: StepSpan = {
      end: (outcome, error) => {
        if (ended) return;
        ended = true;
        span.setAttribute('geneva_drive.outcome', outcome);
        if (error) this.fail(span, error);
        span.end();
      },
    };
    try {
      return await context.with(trace.setSpan(ROOT_CONTEXT, span), () => fn(handle));
    } catch (error) {
      handle.end('exception', error instanceof Error ? error : new Error(String(error)));
      throw error;
    } finally {
      handle.end('unknown', null);
    }
  }

  private fail(span: OpenTelemetryApi.Span, error: unknown): void {
    const exception = error instanceof Error ? error : new Error(String(error));
    span.recordException(exception);
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: exception.message });
  }
}
