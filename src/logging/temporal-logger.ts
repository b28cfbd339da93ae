// Routes the Temporal SDK's logs (worker, workflow sinks, activity context) and Core's
// forwarded logs through pino, so every line is JSON, redacted, and carries workflowId/runId.
import type { Logger as PinoLogger } from 'pino';
import {
  Runtime,
  makeTelemetryFilterString,
  type LogLevel,
  type LogMetadata,
  type Logger,
  type MetricsBuffer,
} from '@temporalio/worker';
import { setProcessMetricMeterSource } from '../telemetry/metrics';
import { DURATION_BUCKETS_S, METRICS } from '../shared/flow-metrics';

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

export class PinoTemporalLogger implements Logger {
  constructor(private readonly pino: PinoLogger) {}

  log(level: LogLevel, message: string, meta?: LogMetadata): void {
    this.pino[LEVELS[level]](meta ?? {}, message);
  }
  trace(message: string, meta?: LogMetadata): void {
    this.log('TRACE', message, meta);
  }
  debug(message: string, meta?: LogMetadata): void {
    this.log('DEBUG', message, meta);
  }
  info(message: string, meta?: LogMetadata): void {
    this.log('INFO', message, meta);
  }
  warn(message: string, meta?: LogMetadata): void {
    this.log('WARN', message, meta);
  }
  error(message: string, meta?: LogMetadata): void {
    this.log('ERROR', message, meta);
  }
}

let installed = false;

export interface TemporalRuntimeOptions {
  /** host:port of the Prometheus exporter (`/metrics`): the SDK's worker metrics and the project's (METRICS_PORT). */
  metricsBindAddress?: string;
  /** Or a buffer the process reads the metrics from itself (tests: what a workflow counted). */
  metricsBuffer?: MetricsBuffer;
}

/**
 * Installs the Temporal Runtime once per process with pino as its logger and Core logs forwarded, and
 * (with `metricsBindAddress`) its Prometheus exporter, whose meter then records the process's business
 * and HTTP metrics too (src/telemetry/metrics.ts). Returns false when a Runtime was already installed
 * (its options stay; a later call's metrics address is not applied).
 */
export function installTemporalRuntime(
  pino: PinoLogger,
  level: LogLevel = 'INFO',
  opts: TemporalRuntimeOptions = {},
): boolean {
  if (installed) return false;
  Runtime.install({
    logger: new PinoTemporalLogger(pino.child({ component: 'temporal' })),
    telemetryOptions: {
      logging: {
        filter: makeTelemetryFilterString({ core: level === 'TRACE' || level === 'DEBUG' ? level : 'WARN' }),
        forward: {},
      },
      ...(opts.metricsBindAddress
        ? {
            metrics: {
              prometheus: {
                bindAddress: opts.metricsBindAddress,
                countersTotalSuffix: true,
                // Durations in seconds, with the unit in the name (temporal_…_latency_seconds), as
                // Prometheus names them; ours are named so already (src/shared/flow-metrics.ts).
                useSecondsForDurations: true,
                unitSuffix: true,
                histogramBucketOverrides: {
                  [METRICS.httpRequestDuration]: DURATION_BUCKETS_S,
                  [METRICS.serviceCallDuration]: DURATION_BUCKETS_S,
                },
              },
            },
          }
        : opts.metricsBuffer
          ? { metrics: { buffer: opts.metricsBuffer } }
          : {}),
    },
  });
  installed = true;
  // The Runtime may shut down when idle and be created again with the same options: always ask for the
  // current one through the public Runtime.instance() (which re-creates it from those options if needed).
  setProcessMetricMeterSource(() => Runtime.instance().metricMeter);
  return true;
}
