// Shared start-up for every process: config (fail fast, name the variable) and the logger.
import 'dotenv/config';
import type { Logger } from 'pino';
import { ConfigError, loadConfig, type AppConfig } from './config';
import { createLogger } from '../logging/logger';

/**
 * `load` is the process's own loader (src/config/processes.ts: loadWorkerConfig, loadReceiverConfig,
 * loadCodecConfig, ...), so a process validates and holds only the variables it reads.
 */
export function bootstrap<C extends Pick<AppConfig, 'logLevel'> = AppConfig>(
  name: string,
  load: () => C = loadConfig as unknown as () => C,
): { config: C; logger: Logger } {
  try {
    const config = load();
    return { config, logger: createLogger({ level: config.logLevel, name }) };
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}

/** Runs `stop` once on SIGINT/SIGTERM, then exits. */
export function onShutdown(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handler = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stop()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.on('SIGINT', () => handler('SIGINT'));
  process.on('SIGTERM', () => handler('SIGTERM'));
}
