/** What the dashboard reads of a request, on Express and on Fastify alike. */
export interface DashboardRequest {
  headers: Record<string, string | string[] | undefined>;
  /** Express: the path as the client sent it (under the global prefix). */
  originalUrl?: string;
  url: string;
  body?: unknown;
}

/** What the dashboard calls on a response: Express's `status`/`setHeader`/`send`, or Fastify's. */
export interface DashboardResponse {
  status?(code: number): unknown;
  code?(code: number): unknown;
  setHeader?(name: string, value: string): unknown;
  header?(name: string, value: string): unknown;
  send(body: string): unknown;
}

/** The request path without its query string. */
export function requestPath(request: DashboardRequest): string {
  return (request.originalUrl ?? request.url).split('?')[0];
}

/** The form body (urlencoded) or JSON body as a plain record; anything else is empty. */
export function bodyOf(request: DashboardRequest): Record<string, unknown> {
  const body = request.body;
  return body !== null && typeof body === 'object' && !Array.isArray(body)
    ? (body as Record<string, unknown>)
    : {};
}

/** Sends a complete response with its status and headers. */
export function sendResponse(
  response: DashboardResponse,
  status: number,
  headers: Record<string, string>,
  body: string,
): void {
  if (response.status) response.status(status);
  else response.code?.(status);
  for (const [name, value] of Object.entries(headers)) {
    if (response.setHeader) response.setHeader(name, value);
    else response.header?.(name, value);
  }
  response.send(body);
}
