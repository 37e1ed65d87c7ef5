/** The parts of a W3C `traceparent` (version 00) that a span link needs. */
export interface TraceParentParts {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

const TRACE_PARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** `00-<trace id>-<span id>-<flags>`, the form stored with the workflow. */
export function formatTraceParent(parts: TraceParentParts): string {
  return `00-${parts.traceId}-${parts.spanId}-${parts.traceFlags.toString(16).padStart(2, '0')}`;
}

/** The parts of a stored traceparent; null for anything else (an all-zero id included). */
export function parseTraceParent(value: string | null | undefined): TraceParentParts | null {
  const match = value ? TRACE_PARENT.exec(value) : null;
  if (!match || /^0+$/.test(match[1]) || /^0+$/.test(match[2])) return null;
  return { traceId: match[1], spanId: match[2], traceFlags: parseInt(match[3], 16) };
}
