// A SERVER span for each request the webhook receiver and the codec server answer, in the caller's
// trace when the request carries W3C `traceparent`, and active while the handler runs: every log line
// the handler writes then carries trace_id/span_id (src/logging/logger.ts reads the active span), and a
// Temporal call made from it (the receiver's signal) joins the same trace.
// Span attributes: the server, the route template, method and status; never a path (references ride
// in some), a query, a header or a body. With tracing not installed the API's no-op tracer and
// propagator make this a pass-through: no ids, no cost worth counting.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface ServerSpanOptions {
  /** 'webhooks' or 'codec': the span's `payflow.server`. */
  server: string;
  /** The path's route template (the metrics' route label), so no reference reaches the span. */
  routeOf: (path: string) => string;
}

const UNTRACED_ROUTES = new Set(['/healthz', '/readyz']);

/** Runs `handle` inside a SERVER span for the request; the span ends when the response is done. */
export function withServerSpan<T>(
  opts: ServerSpanOptions,
  req: IncomingMessage,
  res: ServerResponse,
  path: string | undefined,
  handle: () => T,
): T {
  const route = path === undefined ? 'malformed' : opts.routeOf(path);
  // Health probes come every few seconds with no trace of their own: a root trace each would be noise.
  if (UNTRACED_ROUTES.has(route)) return handle();
  const parent = propagation.extract(context.active(), req.headers);
  const span = trace.getTracer('payflow-http-server').startSpan(
    `${req.method ?? 'OTHER'} ${route}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'http.request.method': req.method ?? 'OTHER',
        'payflow.server': opts.server,
        'payflow.route': route,
      },
    },
    parent,
  );
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    endSpan(span, res);
  };
  res.once('finish', end);
  res.once('close', end);
  return context.with(trace.setSpan(parent, span), handle);
}

function endSpan(span: Span, res: ServerResponse): void {
  if (res.headersSent) {
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  } else {
    span.setAttribute('error.type', 'client_closed');
  }
  span.end();
}
