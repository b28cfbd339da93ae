// Shared start-up for every process: config (fail fast, name the variable) and the logger.
import 'dotenv/config';
import type { Logger } from 'pino';
import { ConfigError, loadConfig, type AppConfig } from './config';
import { createLogger } from '../logging/logger';

export function bootstrap(name: string): { config: AppConfig; logger: Logger } {
  try {
    const config = loadConfig();
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
