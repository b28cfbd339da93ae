// The webhook receiver for a test's config on a free local port (a process of the fuzz suite uses it
// too, so this file needs no jest), a charge_successful notification's and a virtual-account credit
// notification's body, and what the latter's
// signature covers, written from the spec rather than taken from src (a test of the signature must
// not share its bug).
import type { Server } from 'node:http';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { AppConfig } from '../../src/config/config';
import { createLogger } from '../../src/logging/logger';
import { createWebhookReceiver, listen } from '../../src/webhooks/receiver';

/**
 * Starts the receiver for `config` (its secret key; its task queue unless `options.taskQueue`) with
 * `client`, listening on a free port of 127.0.0.1; the logger is silent unless given, and the memory
 * of processed notifications holds the receiver's default count unless `dedupeCapacity` says.
 */
export async function listenWebhookReceiver(
  config: AppConfig,
  client: Client,
  options: { logger?: Logger; taskQueue?: string; dedupeCapacity?: number } = {},
): Promise<{ server: Server; url: string }> {
  const server = createWebhookReceiver({
    client,
    taskQueue: options.taskQueue ?? config.temporal.taskQueue,
    secretKey: config.payments.secretKey,
    returnLinks: config.returnLinks,
    logger: options.logger ?? createLogger({ level: 'silent' }),
    ...(options.dedupeCapacity !== undefined && { dedupeCapacity: options.dedupeCapacity }),
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

/** An E-2 virtual-account credit notification for `ref` (5000 into 4567891234, CUST-1), no `version`; `over` on top. */
export function vaCreditBody(ref: string, over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    transaction_reference: ref,
    virtual_account_number: '4567891234',
    principal_amount: '5000.00',
    settled_amount: '4975.00',
    fee_charged: '25.00',
    transaction_date: '2026-11-22T10:00:00.000Z',
    customer_identifier: 'CUST-1',
    transaction_indicator: 'C',
    remarks: 'Transfer',
    currency: 'NGN',
    channel: 'virtual-account',
    sender_name: 'Ada',
    meta: { freeze_transaction_ref: null, reason_for_frozen_transaction: null },
    encrypted_body: 'x',
    ...over,
  };
}

/** An E-1 charge_successful notification for `ref` (10 000, card 4242…, token tok_1), as the raw body the service posts. */
export function chargeSuccessfulBody(
  ref: string,
  { gatewayRef = `${ref}_1_1`, isRecurring = false }: { gatewayRef?: string; isRecurring?: boolean } = {},
): string {
  return JSON.stringify({
    Event: 'charge_successful',
    TransactionRef: ref,
    Body: {
      amount: 10000,
      transaction_ref: ref,
      gateway_ref: gatewayRef,
      transaction_status: 'Success',
      email: 'payer@example.com',
      merchant_id: 'SBN1EBZEQ8',
      currency: 'NGN',
      transaction_type: 'Card',
      merchant_amount: 9850,
      created_at: '2026-11-22T10:00:00.000Z',
      meta: { order: 'A-1' },
      payment_information: {
        payment_type: 'card',
        pan: '424242******4242|12/29',
        card_type: 'visa',
        token_id: 'tok_1',
      },
      is_recurring: isRecurring,
    },
  });
}
