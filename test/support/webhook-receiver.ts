// The webhook receiver for a test's config on a free local port (a process of the fuzz suite uses it
// too, so this file needs no jest).
import type { Server } from 'node:http';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { AppConfig } from '../../src/config/config';
import { createLogger } from '../../src/logging/logger';
import { createWebhookReceiver, listen } from '../../src/webhooks/receiver';

/**
 * Starts the receiver for `config` (its secret key; its task queue unless `options.taskQueue`) with
 * `client`, listening on a free port of 127.0.0.1; the logger is silent unless given.
 */
export async function listenWebhookReceiver(
  config: AppConfig,
  client: Client,
  options: { logger?: Logger; taskQueue?: string } = {},
): Promise<{ server: Server; url: string }> {
  const server = createWebhookReceiver({
    client,
    taskQueue: options.taskQueue ?? config.temporal.taskQueue,
    secretKey: config.payments.secretKey,
    logger: options.logger ?? createLogger({ level: 'silent' }),
  });
  return { server, url: await listen(server, 0) };
}
