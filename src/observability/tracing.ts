// OpenTelemetry tracing for one process, off unless configured (src/config/observability.ts): the
// standard OTEL_* variables choose the exporter (OTLP over HTTP, whose endpoint, headers and protocol
// the exporter reads itself; or the console), the service name and the sampler.
//
// Once installed, the Temporal client, the worker's workflows and activities, and the calls to the
// payments service join one trace (src/observability/trace-context.ts wires the interceptors).
//
// Every span is sanitised before any exporter sees it (SafeSpanExporter): only an allowlist of
// attributes with primitive values goes out (Temporal ids, workflow type, task queue, HTTP method,
// host and status, our operation names), error messages and stack traces are dropped (the exception's
// type stays), so no card data, PIN, OTP, key, e-mail or free text leaves the process. The Temporal
// workflow exporter attaches the whole WorkflowInfo (memo, search attributes, last failure) to each
// workflow span: the allowlist keeps only the ids.
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource, envDetectorSync } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import type { AppConfig } from '../config/config';
import { activeTracing, setActiveTracing, type ActiveTracing } from './trace-context';

/** Attribute names that may leave the process (besides the prefixes below). */
const ALLOWED_ATTRIBUTES = new Set([
  // @temporalio/interceptors-opentelemetry's
  'temporalWorkflowId',
  'run_id',
  'temporalActivityId',
  'temporalUpdateId',
  // WorkflowInfo fields the workflow span exporter attaches (the rest is dropped)
  'workflowId',
  'runId',
  'workflowType',
  'taskQueue',
  'namespace',
  'attempt',
]);
const ALLOWED_PREFIXES = ['http.request.method', 'http.response.status_code', 'server.', 'error.type', 'payflow.'];

function allowedAttribute(key: string, value: unknown): boolean {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return false;
  return ALLOWED_ATTRIBUTES.has(key) || ALLOWED_PREFIXES.some((p) => key.startsWith(p));
}

function allowedOnly<T extends Record<string, unknown> | undefined>(attributes: T): Record<string, unknown> {
  return Object.fromEntries(Object.entries(attributes ?? {}).filter(([k, v]) => allowedAttribute(k, v)));
}

/** The span as exporters may see it: allowlisted attributes, no status message, exception events reduced to their type. */
export function sanitizeSpan(span: ReadableSpan): ReadableSpan {
  return Object.create(span, {
    attributes: { value: allowedOnly(span.attributes), enumerable: true },
    status: { value: { code: span.status.code }, enumerable: true },
    events: {
      value: span.events.map((e) => ({
        name: e.name,
        time: e.time,
        ...(e.attributes?.['exception.type'] !== undefined
          ? { attributes: { 'exception.type': e.attributes['exception.type'] } }
          : {}),
      })),
      enumerable: true,
    },
    links: { value: span.links.map((l) => ({ context: l.context })), enumerable: true },
  }) as ReadableSpan;
}

/** Wraps an exporter so that it only ever receives sanitised spans. */
export class SafeSpanExporter implements SpanExporter {
  constructor(private readonly inner: SpanExporter) {}
  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    try {
      this.inner.export(spans.map(sanitizeSpan), resultCallback);
    } catch (error) {
      resultCallback({ code: ExportResultCode.FAILED, error: error as Error });
    }
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

export interface InstallTracingOptions {
  /** Resource service.name (OTEL_SERVICE_NAME wins when set in config). */
  serviceName: string;
  /** Where spans go; default from config: OTLP/HTTP or the console. Tests pass an in-memory exporter. */
  exporter?: SpanExporter;
  /** Export each span at once (tests) instead of in batches. */
  simple?: boolean;
}

export interface InstalledTracing extends ActiveTracing {
  provider: BasicTracerProvider;
  /** Flushes pending spans and stops tracing. */
  shutdown(): Promise<void>;
}

let installed: InstalledTracing | undefined;

/** Installs tracing for this process (once): global tracer provider, W3C propagator, async-hooks context. */
export function installTracing(
  opts: InstallTracingOptions & { config?: Pick<AppConfig, 'observability'> },
): InstalledTracing {
  if (installed) return installed;
  const serviceName = opts.config?.observability.tracing.serviceName ?? opts.serviceName;
  const exporter =
    opts.exporter ??
    (opts.config?.observability.tracing.exporter === 'console' ? new ConsoleSpanExporter() : new OTLPTraceExporter());
  const safe = new SafeSpanExporter(exporter);
  const spanProcessor: SpanProcessor = opts.simple ? new SimpleSpanProcessor(safe) : new BatchSpanProcessor(safe);
  // OTEL_RESOURCE_ATTRIBUTES (e.g. deployment.environment, service.version) on every span; the
  // service name is ours (OTEL_SERVICE_NAME through config, or the process's own name) and wins.
  const resource = envDetectorSync.detect().merge(new Resource({ 'service.name': serviceName }));
  // The provider reads OTEL_TRACES_SAMPLER(_ARG) and the span limits from the environment itself.
  const provider = new BasicTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register({
    contextManager: new AsyncLocalStorageContextManager(),
    propagator: new W3CTraceContextPropagator(),
  });
  const tracer = provider.getTracer('payflow');
  installed = {
    tracer,
    spanProcessor,
    resource,
    provider,
    shutdown: async () => {
      setActiveTracing(undefined);
      installed = undefined;
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
  setActiveTracing(installed);
  return installed;
}

/** Installs tracing when config asks for it (an OTLP endpoint or OTEL_TRACES_EXPORTER); undefined otherwise. */
export function installTracingFromConfig(
  config: Pick<AppConfig, 'observability'>,
  serviceName: string,
): InstalledTracing | undefined {
  if (!config.observability.tracing.enabled) return undefined;
  return activeTracing() ? installed : installTracing({ serviceName, config });
}
