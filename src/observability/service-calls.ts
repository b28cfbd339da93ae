// Each call to the payments service as a metric (operation, result, duration) and, when tracing is
// installed, a CLIENT span in the caller's trace (inside an activity: the activity's span, itself in the
// workflow's and the starter's trace), with the W3C trace context sent on as `traceparent`.
// Span attributes: the operation name, method, host and status. Never a path (references and
// identifiers ride in some), a query, a body or a header of the request.
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { CallObserver } from '../api/client';
import { recordServiceCall } from '../telemetry/metrics';

export function serviceCallObserver(baseUrl: string): CallObserver {
  const url = new URL(baseUrl);
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return {
    start({ operation, method, moneyMoving }) {
      const started = performance.now();
      const tracer = trace.getTracer('payflow-payments-client');
      const span = tracer.startSpan(`${method} ${operation}`, {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': method,
          'server.address': url.hostname,
          'server.port': port,
          'payflow.operation': operation,
          'payflow.money_moving': moneyMoving,
        },
      });
      const headers: Record<string, string> = {};
      propagation.inject(trace.setSpan(context.active(), span), headers);
      return {
        headers,
        end(outcome) {
          recordServiceCall(operation, outcome, performance.now() - started);
          if (outcome.status !== undefined) {
            span.setAttribute('http.response.status_code', outcome.status);
            if (outcome.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          } else {
            span.setAttribute('error.type', outcome.failure ?? 'connection');
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end();
        },
      };
    },
  };
}
