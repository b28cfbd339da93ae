// The webhook receiver for a test's config on a free local port (a process of the fuzz suite uses it
// too, so this file needs no jest), and what a virtual-account notification's signature covers,
// written from the spec rather than taken from src (a test of the signature must not share its bug).
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

/** E-2 versions 2 and 3: the six values a virtual-account notification's signature covers, joined by '|', in the spec's order. */
export const vaSignedValues = (b: Record<string, unknown>): string =>
  [
    b.transaction_reference,
    b.virtual_account_number,
    b.currency,
    b.principal_amount,
    b.settled_amount,
    b.customer_identifier,
  ].join('|');
