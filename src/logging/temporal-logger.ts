// Routes the Temporal SDK's logs (worker, workflow sinks, activity context) and Core's
// forwarded logs through pino, so every line is JSON, redacted, and carries workflowId/runId.
import type { Logger as PinoLogger } from 'pino';
import { Runtime, makeTelemetryFilterString, type LogLevel, type LogMetadata, type Logger } from '@temporalio/worker';

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
  trace(message: string, meta?: LogMetadata): void { this.log('TRACE', message, meta); }
  debug(message: string, meta?: LogMetadata): void { this.log('DEBUG', message, meta); }
  info(message: string, meta?: LogMetadata): void { this.log('INFO', message, meta); }
  warn(message: string, meta?: LogMetadata): void { this.log('WARN', message, meta); }
  error(message: string, meta?: LogMetadata): void { this.log('ERROR', message, meta); }
}

let installed = false;

/** Installs the Temporal Runtime once per process with pino as its logger and Core logs forwarded. */
export function installTemporalRuntime(pino: PinoLogger, level: LogLevel = 'INFO'): void {
  if (installed) return;
  installed = true;
  Runtime.install({
    logger: new PinoTemporalLogger(pino.child({ component: 'temporal' })),
    telemetryOptions: {
      logging: { filter: makeTelemetryFilterString({ core: level === 'TRACE' || level === 'DEBUG' ? level : 'WARN' }), forward: {} },
    },
  });
}
