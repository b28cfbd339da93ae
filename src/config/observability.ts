// Observability settings (docs/operations.md): the Prometheus scrape address, the health endpoints
// and OpenTelemetry tracing. Spread into config.ts's zod schema; parsed with the rest of the config,
// so a bad value stops the process naming the variable.
import { z } from 'zod';
import { httpUrl } from './env-values';

/** `off`, or a port (0 = a free port, shown in the log and `npm start`'s banner). */
const portOrOff = z
  .string()
  .refine(
    (v) => v === 'off' || (/^\d{1,5}$/.test(v) && Number(v) <= 65535),
    'must be a port (0-65535, 0 = a free one) or "off"',
  )
  .optional();
const otlpProtocol = z
  .enum(['http/protobuf', 'http/json'], {
    error: 'must be http/protobuf or http/json (the OTLP/HTTP exporter; gRPC is not shipped)',
  })
  .optional();

export const observabilityEnvShape = {
  // Prometheus metrics (the Temporal Runtime's exporter: SDK and business metrics of the process). Unset: off.
  METRICS_PORT: portOrOff,
  METRICS_HOST: z.string().min(1).optional(),
  // `npm start` only: the METRICS_PORT of the worker process it spawns (default 9465; off when METRICS_PORT=off).
  WORKER_METRICS_PORT: portOrOff,
  // Liveness /healthz and readiness /readyz of the worker. Default: 8080 in production, a free port otherwise.
  HEALTH_PORT: portOrOff,
  HEALTH_HOST: z.string().min(1).optional(),
  // OpenTelemetry tracing, off unless configured: the standard variables.
  OTEL_SDK_DISABLED: z.enum(['true', 'false']).optional(),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'console', 'none'], { error: 'must be otlp, console or none' }).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl,
  OTEL_EXPORTER_OTLP_PROTOCOL: otlpProtocol,
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: otlpProtocol,
  // Read by the exporter itself; may carry a vendor's API key: never logged.
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  OTEL_RESOURCE_ATTRIBUTES: z.string().optional(),
  OTEL_TRACES_SAMPLER: z
    .enum([
      'always_on',
      'always_off',
      'traceidratio',
      'parentbased_always_on',
      'parentbased_always_off',
      'parentbased_traceidratio',
    ])
    .optional(),
  OTEL_TRACES_SAMPLER_ARG: z.string().optional(),
};

type ObservabilityEnv = { [K in keyof typeof observabilityEnvShape]?: z.output<(typeof observabilityEnvShape)[K]> };

export interface ListenSetting {
  host: string;
  /** 0: a free port. */
  port: number;
}

export interface ObservabilityConfig {
  /** The Prometheus scrape address of this process (`/metrics`); undefined: metrics off. */
  metrics?: ListenSetting;
  /** METRICS_PORT=off: metrics refused outright (npm start's default address is not used either). */
  metricsOff: boolean;
  /** WORKER_METRICS_PORT as set (`npm start`'s worker process); undefined: unset. */
  workerMetricsPort?: number | 'off';
  /** The worker's health server (`/healthz`, `/readyz`); undefined: off. */
  health?: ListenSetting;
  tracing: {
    enabled: boolean;
    exporter: 'otlp' | 'console' | 'none';
    /** OTEL_SERVICE_NAME, if set (each process otherwise names itself: payflow-worker, …). */
    serviceName?: string;
  };
}

const listen = (
  port: string | undefined,
  host: string | undefined,
  fallbackPort: number | undefined,
  production: boolean,
): ListenSetting | undefined => {
  if (port === 'off') return undefined;
  const p = port === undefined ? fallbackPort : Number(port);
  if (p === undefined) return undefined;
  return { host: host ?? (production ? '0.0.0.0' : '127.0.0.1'), port: p };
};

export function observabilityConfig(env: ObservabilityEnv, production: boolean): ObservabilityConfig {
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const exporter = env.OTEL_TRACES_EXPORTER ?? (endpoint ? 'otlp' : 'none');
  return {
    metrics: listen(env.METRICS_PORT, env.METRICS_HOST, undefined, production),
    metricsOff: env.METRICS_PORT === 'off',
    ...(env.WORKER_METRICS_PORT === undefined
      ? {}
      : { workerMetricsPort: env.WORKER_METRICS_PORT === 'off' ? ('off' as const) : Number(env.WORKER_METRICS_PORT) }),
    health: listen(env.HEALTH_PORT, env.HEALTH_HOST, production ? 8080 : 0, production),
    tracing: {
      enabled: env.OTEL_SDK_DISABLED !== 'true' && exporter !== 'none',
      exporter,
      ...(env.OTEL_SERVICE_NAME ? { serviceName: env.OTEL_SERVICE_NAME } : {}),
    },
  };
}
