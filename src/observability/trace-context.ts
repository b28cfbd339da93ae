// The process's tracing, as the client, worker and API client see it: whether tracing is installed
// (src/observability/tracing.ts does that, from the OTEL_* variables), and the Temporal interceptors that
// carry the trace from a starter through the workflow and its activities to the HTTP call.
// Light on purpose: only @opentelemetry/api and the interceptors' client/worker parts are loaded here.
import type { Tracer } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';

export interface ActiveTracing {
  tracer: Tracer;
  /** Receives every span of the process, workflow spans included (sanitised before export). */
  spanProcessor: SpanProcessor;
  resource: Resource;
}

let active: ActiveTracing | undefined;

export function setActiveTracing(tracing: ActiveTracing | undefined): void {
  active = tracing;
}

export function activeTracing(): ActiveTracing | undefined {
  return active;
}

/** The OpenTelemetry workflow interceptor module, bundled with the workflows when tracing is on. */
export const OTEL_WORKFLOW_INTERCEPTORS_PATH =
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');
