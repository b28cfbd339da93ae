// The process's business and HTTP metrics, recorded on the Temporal Runtime's metric meter so that one
// Prometheus endpoint per process (METRICS_PORT, the Runtime's exporter) serves the SDK's worker metrics
// and ours together. Without an installed Runtime (or with metrics off) every call is a no-op.
//
// This module does not import @temporalio/worker (backends that only start flows never load the native
// module): installTemporalRuntime (src/logging/temporal-logger.ts) registers the Runtime's meter here.
//
// Labels hold bounded, non-personal values only (src/shared/flow-metrics.ts): route templates, never a
// raw path (the codec server's path may carry its token), operation names, status classes.
import { Context as ActivityContext } from '@temporalio/activity';
import { noopMetricMeter, type MetricCounter, type MetricHistogram, type MetricMeter } from '@temporalio/common';
import { METRICS } from '../shared/flow-metrics';

let meterSource: () => MetricMeter | undefined = () => undefined;

/** Registers where the process's meter comes from (the Temporal Runtime's, which may be re-created). */
export function setProcessMetricMeterSource(source: () => MetricMeter | undefined): void {
  meterSource = source;
}

/** The meter metrics are recorded on: the Runtime's, or a no-op. */
export function processMetricMeter(): MetricMeter {
  return meterSource() ?? noopMetricMeter;
}

// Creating a metric calls into the native runtime: keep one object per meter and name.
const cache = new WeakMap<MetricMeter, Map<string, MetricCounter | MetricHistogram>>();
function cached<T extends MetricCounter | MetricHistogram>(key: string, create: (meter: MetricMeter) => T): T {
  const meter = processMetricMeter();
  let byName = cache.get(meter);
  if (!byName) cache.set(meter, (byName = new Map()));
  let metric = byName.get(key) as T | undefined;
  if (!metric) byName.set(key, (metric = create(meter)));
  return metric;
}
const counter = (name: string, description: string) =>
  cached(`c:${name}`, (m) => m.createCounter(name, undefined, description));
// No unit given: the name already ends in `_seconds`, and the exporter's unitSuffix would add another.
const histogram = (name: string, description: string) =>
  cached(`h:${name}`, (m) => m.createHistogram(name, 'float', undefined, description));
const seconds = (ms: number) => Math.max(0, ms) / 1000;

/** Runs `record` and swallows what it throws: metrics never break the code they observe. */
function safely(record: () => void): void {
  try {
    record();
  } catch {
    // ignored on purpose
  }
}

export type WebhookKind = 'payment' | 'virtual-account' | 'unknown';
/** verified: signature good and handed to Temporal; rejected: signature bad or missing; duplicate: already processed; invalid: signed but not a valid body. */
export type WebhookResult = 'verified' | 'rejected' | 'duplicate' | 'invalid';

export function countWebhook(kind: WebhookKind, result: WebhookResult): void {
  safely(() => counter(METRICS.webhooks, 'Webhooks received by the receiver').add(1, { kind, result }));
}

/** One answered request, as createSafeServer hands it to its observer: the parsed path (undefined for a malformed target), which the observer maps to a route. */
export interface HttpExchange {
  method: string | undefined;
  path: string | undefined;
  status: number;
  durationMs: number;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** An observer for createSafeServer: requests by route template, method and status, and their duration. */
export function httpMetricsObserver(
  server: string,
  routeOf: (path: string) => string,
): (exchange: HttpExchange) => void {
  return (e) =>
    safely(() => {
      const route = e.path === undefined ? 'malformed' : routeOf(e.path);
      const method = e.method && METHODS.has(e.method) ? e.method : 'other';
      counter(METRICS.httpRequests, 'HTTP requests answered').add(1, {
        server,
        route,
        method,
        status_code: String(e.status),
      });
      histogram(METRICS.httpRequestDuration, 'HTTP request duration').record(seconds(e.durationMs), {
        server,
        route,
      });
    });
}

/** The result label of a call to the payments service: its status class, or how it failed without one. */
export function serviceCallResult(outcome: { status?: number; failure?: string }): string {
  if (outcome.status !== undefined) return `${Math.floor(outcome.status / 100)}xx`;
  return outcome.failure === 'timeout' || outcome.failure === 'aborted' ? outcome.failure : 'connection';
}

/** The running activity's metric meter (it adds activity_type, namespace, task_queue), or undefined outside an activity. */
function activityMeter(): MetricMeter | undefined {
  if (processMetricMeter() === noopMetricMeter) return undefined;
  try {
    return ActivityContext.current().metricMeter;
  } catch {
    return undefined;
  }
}

/**
 * One call to the payments service: inside an activity through the activity's metric meter (the SDK's
 * meter for activities), elsewhere (CLI, backends) through the process's.
 */
export function recordServiceCall(
  operation: string,
  outcome: { status?: number; failure?: string },
  durationMs: number,
): void {
  safely(() => {
    const tags = { operation, result: serviceCallResult(outcome) };
    const meter = activityMeter();
    if (meter) {
      meter.createCounter(METRICS.serviceCalls, undefined, 'Calls to the payments service').add(1, tags);
      meter
        .createHistogram(METRICS.serviceCallDuration, 'float', undefined, 'Payments service call duration')
        .record(seconds(durationMs), { operation });
      return;
    }
    counter(METRICS.serviceCalls, 'Calls to the payments service').add(1, tags);
    histogram(METRICS.serviceCallDuration, 'Payments service call duration').record(seconds(durationMs), {
      operation,
    });
  });
}
