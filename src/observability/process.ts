// One call per process (worker, webhook receiver, codec server, `npm start`) that turns on what config
// asks for: the Prometheus scrape address (the Temporal Runtime's exporter, METRICS_PORT), tracing
// (OTEL_*), and for the worker its health server (HEALTH_PORT). Call it before any Temporal connection
// or client is made: the Runtime's options and the client interceptors are fixed when they are created.
import type { Logger } from 'pino';
import type { NativeConnection, Worker } from '@temporalio/worker';
import type { AppConfig } from '../config/config';
import type { ListenSetting } from '../config/observability';
import { freePort } from '../http/free-port';
import { installTemporalRuntime } from '../logging/temporal-logger';
import { installTracingFromConfig, type InstalledTracing } from './tracing';
import { startHealthServer, WorkerHealth, type RunningHealthServer } from './health';

const hostForUrl = (host: string) => (host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host);

export interface ProcessObservability {
  /** Where Prometheus scrapes this process; undefined when metrics are off. */
  metricsUrl?: string;
  tracing?: InstalledTracing;
  /** Flushes spans (metrics need nothing: the Runtime stops with its last worker). */
  stop(): Promise<void>;
}

export interface ProcessObservabilityOptions {
  /** service.name of this process's spans (OTEL_SERVICE_NAME wins). */
  serviceName: string;
  /** Install the Temporal Runtime even with metrics off (processes that run a worker). */
  runtime?: boolean;
  /** Overrides config.observability.metrics (npm start turns metrics on by default). */
  metrics?: ListenSetting;
}

export async function startProcessObservability(
  config: Pick<AppConfig, 'observability'>,
  logger: Logger,
  opts: ProcessObservabilityOptions,
): Promise<ProcessObservability> {
  const metrics = opts.metrics ?? config.observability.metrics;
  let metricsUrl: string | undefined;
  if (metrics) {
    const port = metrics.port === 0 ? await freePort(metrics.host) : metrics.port;
    const bind = `${metrics.host.includes(':') ? `[${metrics.host}]` : metrics.host}:${port}`;
    let fresh: boolean;
    try {
      fresh = installTemporalRuntime(logger, 'INFO', { metricsBindAddress: bind });
    } catch (err) {
      // e.g. "Address already in use": name the setting, not only Core's message.
      throw new Error(
        `METRICS_PORT: the metrics endpoint cannot listen on ${bind} (${(err as Error).message}); choose another port, 0 for a free one, or off`,
      );
    }
    if (fresh) {
      metricsUrl = `http://${hostForUrl(metrics.host)}:${port}/metrics`;
      logger.info({ metrics: metricsUrl }, 'Prometheus metrics exported');
    } else {
      logger.warn('metrics requested, but the Temporal Runtime was installed earlier without them: not exported');
    }
  } else if (opts.runtime) {
    installTemporalRuntime(logger);
  }
  const tracing = installTracingFromConfig(config, opts.serviceName);
  if (tracing)
    logger.info(
      { exporter: config.observability.tracing.exporter, serviceName: opts.serviceName },
      'OpenTelemetry tracing on',
    );
  return {
    metricsUrl,
    tracing,
    stop: async () => {
      await tracing?.shutdown().catch((err: unknown) => logger.warn({ err }, 'flushing spans failed'));
    },
  };
}

export interface RunningWorkerHealth {
  health: WorkerHealth;
  /** Base URL of /healthz and /readyz; undefined when HEALTH_PORT=off. */
  url?: string;
  watch(workers: Worker | readonly Worker[], connection: NativeConnection): void;
  close(): Promise<void>;
}

/** The worker's /healthz and /readyz on HEALTH_PORT (started before the worker connects: liveness answers meanwhile). */
export async function startWorkerHealth(
  config: Pick<AppConfig, 'observability'>,
  logger: Logger,
): Promise<RunningWorkerHealth> {
  const health = new WorkerHealth();
  let server: RunningHealthServer | undefined;
  const setting = config.observability.health;
  if (setting) {
    server = await startHealthServer({ host: setting.host, port: setting.port, checks: health, name: 'worker-health' });
    logger.info({ healthz: `${server.url}/healthz`, readyz: `${server.url}/readyz` }, 'worker health endpoints');
  }
  const url = server ? server.url.replace('//0.0.0.0:', '//127.0.0.1:') : undefined;
  return {
    health,
    url,
    watch: (workers, connection) => health.attach(workers, connection),
    close: async () => {
      await server?.close();
    },
  };
}
