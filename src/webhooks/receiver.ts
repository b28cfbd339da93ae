// The webhook receiver: verifies the service's signed notifications on the raw bytes,
// validates them, and hands them to Temporal. Duplicates are processed once.
//
//   POST /webhooks            a payment (E-1) or a virtual-account credit (E-2), told apart by header
//   GET  /payments/return     the redirect's target (E-3): the payment's state for a signed, unexpired link
//                             (src/webhooks/return-page.ts), else a neutral page; rate-limited per address
//   GET  /healthz            alive
//   GET  /readyz             ready: Temporal answers (else 503, and the service's deliveries are 503 too)
// Requests are counted by route and status, webhooks by kind and result (src/telemetry/metrics.ts).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Client } from '@temporalio/client';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { createSafeServer, isHtmlFormContentType, readBodyLimited } from '../http/safe-server';
import type { PaymentWebhookEvent } from '../shared/payment-webhook';
import { inputIssuesOf } from '../shared/input-error';
import { paymentWebhookSchema, virtualAccountWebhookSchema } from './schemas';
import {
  PAYMENT_SIGNATURE_HEADERS,
  VA_SIGNATURE_HEADERS,
  verifyPaymentWebhook,
  verifyVirtualAccountWebhook,
} from './signatures';
import { countWebhook, httpMetricsObserver } from '../telemetry/metrics';
import { answerHealth, temporalReachable, type HealthChecks } from '../observability/health';
import { classifyDeliveryFailure, SingleFlight, type DeliveryFailure } from './delivery-outcome';
import { deliverPaymentWebhook } from './payment-delivery';
import { creditOf, startCreditWorkflow, type VirtualAccountNotification } from './credit-delivery';
import { ReturnPage } from './return-page';

type WebhookKind = 'payment' | 'virtual-account';

/** The route label of a request path (bounded: never the raw path). */
export function receiverRoute(path: string): string {
  if (path === '/webhooks' || path.startsWith('/webhooks/')) return '/webhooks';
  return ['/payments/return', '/healthz', '/readyz'].includes(path) ? path : 'other';
}

export interface WebhookReceiverOptions {
  client: Client;
  taskQueue: string;
  /** The merchant secret key: the HMAC key of both signatures. Never logged. */
  secretKey: string;
  logger: Logger;
  maxBodyBytes?: number;
  /** How many recently processed notifications are remembered for duplicate suppression. */
  dedupeCapacity?: number;
  /** RETURN_LINK_KEY: the return page shows a payment's state only for a link signed with it. Unset: always the neutral page. */
  returnLinks?: { key: string };
  /** Requests to /payments/return per client address and window (default 30 per minute). */
  returnRateLimit?: { limit: number; windowMs: number };
}

class RecentKeys {
  private readonly keys = new Map<string, true>();
  constructor(private readonly capacity: number) {}
  has(key: string): boolean {
    return this.keys.has(key);
  }
  add(key: string): void {
    this.keys.set(key, true);
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.keys().next().value as string);
  }
}

function header(req: IncomingMessage, names: readonly string[]): string | undefined {
  for (const name of names) {
    const v = req.headers[name];
    if (typeof v === 'string' && v.length > 0) return v;
  }
  return undefined;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

export function createWebhookReceiver(opts: WebhookReceiverOptions): Server {
  const receiver = new WebhookReceiver(opts);
  // createSafeServer: a malformed target is a 400 before this runs, and nothing thrown here ends the process.
  return createSafeServer((req, res, url) => receiver.handle(req, res, url), {
    observe: httpMetricsObserver('webhooks', receiverRoute),
    span: { server: 'webhooks', routeOf: receiverRoute },
  });
}

/** One receiver: what it remembers (recent and in-flight notifications) and its routes, in reading order. */
class WebhookReceiver {
  private readonly client: Client;
  private readonly logger: Logger;
  private readonly recent: RecentKeys;
  // Copies of one delivery arriving together share one hand-over to Temporal (one signal, one start).
  private readonly inflight = new SingleFlight();
  private readonly limit: number;
  private readonly returnPage: ReturnPage;
  private readonly health: HealthChecks;

  constructor(private readonly opts: WebhookReceiverOptions) {
    this.client = opts.client;
    this.logger = opts.logger;
    this.recent = new RecentKeys(opts.dedupeCapacity ?? 10_000);
    this.limit = opts.maxBodyBytes ?? 1024 * 1024;
    this.returnPage = new ReturnPage(opts.client, { returnLinks: opts.returnLinks, rateLimit: opts.returnRateLimit });
    this.health = {
      live: () => true,
      ready: async () => {
        const temporal = await temporalReachable(this.client.connection);
        return { ready: temporal, checks: { temporal } };
      },
    };
  }

  async handle(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    try {
      await this.route(req, res, url);
    } catch (err) {
      this.answerFailure(classifyDeliveryFailure(err, req), err, res, url);
    }
  }

  private async route(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    if (
      (url.pathname === '/healthz' || url.pathname === '/readyz') &&
      (await answerHealth(req.method, url.pathname, this.health, res))
    )
      return;
    if (req.method === 'GET' && url.pathname === '/payments/return') return this.returnPage.answer(url, req, res);
    if (url.pathname !== '/webhooks' && !url.pathname.startsWith('/webhooks/'))
      return sendJson(res, 404, { error: 'not found' });
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'method not allowed' });
    // An HTML form encoding is never the service, only another site's page. The credit notification states no content
    // type, so an absent or text/plain one goes on to the signature check, which gates everything.
    if (isHtmlFormContentType(req.headers['content-type']))
      return sendJson(res, 415, { received: false, error: 'Content-Type must be application/json' });
    const raw = await readBodyLimited(req, this.limit);
    const paymentSig = header(req, PAYMENT_SIGNATURE_HEADERS);
    if (paymentSig) return this.payment(raw, paymentSig, res);
    const vaSig = header(req, VA_SIGNATURE_HEADERS);
    if (vaSig) return this.virtualAccount(raw, vaSig, res);
    this.logger.warn('webhook without a signature header: ignored');
    countWebhook('unknown', 'rejected');
    sendJson(res, 401, { received: false, error: 'missing signature header' });
  }

  private async payment(raw: Buffer, signature: string, res: ServerResponse): Promise<void> {
    if (!verifyPaymentWebhook(raw, signature, this.opts.secretKey)) return this.refuseSignature('payment', res);
    const notification = this.validated('payment', paymentWebhookSchema, jsonOf(raw), res);
    if (!notification) return;
    const { Event, TransactionRef, Body } = notification;
    const dedupeKey = `payment:${Event}:${TransactionRef}:${Body.gateway_ref ?? ''}`;
    if (this.recent.has(dedupeKey)) {
      this.logger.info(
        { transactionRef: TransactionRef, event: Event },
        'duplicate payment webhook: already processed',
      );
      return this.acknowledgeDuplicate(res);
    }
    const { value: delivery, shared } = await this.inflight.run(dedupeKey, () =>
      deliverPaymentWebhook(this.client, this.opts.taskQueue, paymentEventOf(notification)),
    );
    if (shared) return this.acknowledgeDuplicate(res);
    this.recent.add(dedupeKey);
    countWebhook('payment', 'verified');
    this.logger.info(
      { transactionRef: TransactionRef, event: Event, delivery },
      delivery === 'flow-closed'
        ? 'payment webhook after its flow closed: acknowledged, nothing started'
        : 'payment webhook delivered to workflow',
    );
    sendJson(res, 200, { received: true });
  }

  private async virtualAccount(raw: Buffer, signature: string, res: ServerResponse): Promise<void> {
    const checked = verifyVirtualAccountWebhook(raw, signature, this.opts.secretKey);
    if (!checked.verified) return this.refuseSignature('virtual-account', res);
    const b = this.validated('virtual-account', virtualAccountWebhookSchema, checked.body, res);
    if (!b) return;
    // Which fields are trusted follows from the signature scheme that held, never from `version`,
    // which versions 2 and 3 do not sign: a whole-body signature is version 1's (every field
    // signed); a six-value one covers those six only, whatever `version` says (it picks only
    // where the credit workflow looks the service's record up: v3 by session id).
    const wholeBody = checked.scheme === 'whole-body';
    // Credit notifications announce credits: transaction_indicator is 'C' (spec, virtual-account transaction).
    if (b.transaction_indicator !== 'C') return this.notACredit(b, wholeBody, res);
    const version = wholeBody ? 1 : b.version === 'v3' ? 3 : 2;
    const dedupeKey = `va:${b.transaction_reference}`;
    let duplicate = this.recent.has(dedupeKey);
    if (!duplicate) {
      const { value: started, shared } = await this.inflight.run(dedupeKey, () =>
        startCreditWorkflow(this.client, this.opts.taskQueue, creditOf(b, version), this.logger),
      );
      duplicate = started || shared;
      this.recent.add(dedupeKey);
    }
    countWebhook('virtual-account', duplicate ? 'duplicate' : 'verified');
    acknowledgeCredit(res, b.transaction_reference);
  }

  private notACredit(b: VirtualAccountNotification, wholeBody: boolean, res: ServerResponse): void {
    countWebhook('virtual-account', 'invalid');
    if (wholeBody) {
      // Signed: truly not a credit. Acknowledged so the service neither redelivers nor logs it; nothing credited.
      this.logger.warn(
        { transactionReference: b.transaction_reference, transactionIndicator: b.transaction_indicator.slice(0, 8) },
        'virtual-account notification that is not a credit: acknowledged, nothing credited',
      );
      return acknowledgeCredit(res, b.transaction_reference);
    }
    // Unsigned here (six-value scheme): not acknowledged, so it stays in the service's webhook error log.
    sendJson(res, 400, {
      received: false,
      errors: [{ field: 'transaction_indicator', message: "must be 'C' (a credit)" }],
    });
  }

  /** The notification checked against its schema; undefined once a 400 has been answered (not JSON, or the issues). */
  private validated<T>(kind: WebhookKind, schema: z.ZodType<T>, json: unknown, res: ServerResponse): T | undefined {
    if (json === undefined) {
      countWebhook(kind, 'invalid');
      sendJson(res, 400, { received: false, error: 'body is not JSON' });
      return undefined;
    }
    const parsed = schema.safeParse(json);
    if (parsed.success) return parsed.data;
    countWebhook(kind, 'invalid');
    sendJson(res, 400, { received: false, errors: inputIssuesOf(parsed.error, '(body)') });
    return undefined;
  }

  private refuseSignature(kind: WebhookKind, res: ServerResponse): void {
    this.logger.warn({ kind }, 'webhook signature mismatch: ignored');
    countWebhook(kind, 'rejected');
    sendJson(res, 401, { received: false, error: 'invalid signature' });
  }

  private acknowledgeDuplicate(res: ServerResponse): void {
    countWebhook('payment', 'duplicate');
    sendJson(res, 200, { received: true, duplicate: true });
  }

  /**
   * 413 for a body over the limit; 400 for a notification no redelivery can fix (the service
   * stops); 503 only when Temporal could not take it now (documented: the service redelivers).
   */
  private answerFailure(failure: DeliveryFailure, err: unknown, res: ServerResponse, url: URL): void {
    if (failure.kind === 'aborted') {
      this.logger.debug({ path: receiverRoute(url.pathname) }, 'client aborted the request');
      return;
    }
    if (failure.kind === 'permanent')
      this.logger.warn({ reason: failure.reason }, 'webhook refused for good: it cannot be handed to Temporal');
    else if (failure.kind === 'transient')
      this.logger.error({ err }, 'webhook processing failed; the service will redeliver');
    if (res.headersSent) return;
    if (failure.kind === 'too-large') return sendJson(res, 413, { received: false, error: 'body too large' });
    if (failure.kind === 'permanent') return sendJson(res, 400, { received: false, error: failure.reason });
    sendJson(res, 503, { received: false, error: 'temporarily unavailable' });
  }
}

/** The body as JSON, or undefined when it is none. */
function jsonOf(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function paymentEventOf({ Event, TransactionRef, Body }: z.output<typeof paymentWebhookSchema>): PaymentWebhookEvent {
  return {
    event: Event,
    transactionRef: TransactionRef,
    amount: Body.amount,
    currency: Body.currency,
    transactionStatus: Body.transaction_status,
    transactionType: Body.transaction_type,
    gatewayRef: Body.gateway_ref ?? undefined,
    merchantAmount: Body.merchant_amount ?? undefined,
    isRecurring: Body.is_recurring ?? false,
    tokenId: Body.payment_information?.token_id ?? undefined,
    meta: Body.meta ?? undefined,
    receivedAt: new Date().toISOString(),
  };
}

/** The acknowledgement body the spec requires for a credit notification (E-2); anything else lands in the service's error log. */
function acknowledgeCredit(res: ServerResponse, transactionReference: string): void {
  sendJson(res, 200, {
    response_code: 200,
    transaction_reference: transactionReference,
    response_description: 'Success',
  });
}

export async function listen(server: Server, port: number, host = '127.0.0.1'): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const addr = server.address();
  return `http://${host}:${typeof addr === 'object' && addr ? addr.port : port}`;
}

export async function closeServer(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
