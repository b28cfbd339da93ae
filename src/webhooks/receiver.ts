// The webhook receiver: verifies the service's signed notifications on the raw bytes,
// validates them, and hands them to Temporal. Duplicates are processed once.
//
//   POST /webhooks            E-1 (payment) or E-2 (virtual-account credit), told apart by header
//   GET  /payments/return     E-3 redirect target: the payment's state for a signed, unexpired link
//                             (src/config/return-links.ts), else a neutral page; rate-limited per address
//   GET  /healthz            alive
//   GET  /readyz             ready: Temporal answers (else 503, and the service's deliveries are 503 too)
// Requests are counted by route and status, webhooks by kind and result (src/observability/metrics.ts).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createSafeServer, isHtmlFormContentType, readBodyLimited } from '../http/safe-server';
import {
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowNotFoundError,
  type Client,
} from '@temporalio/client';
import type { Logger } from 'pino';
import type { PaymentWebhookEvent } from '../shared/payment-webhook';
import { cardPaymentStateQuery } from '../shared/card-payment';
import { checkoutStateQuery } from '../shared/checkout';
import { directPaymentStateQuery } from '../shared/payment-common';
import { tokenChargeStateQuery } from '../shared/recurring';
import { virtualAccountCreditWorkflowId, type VirtualAccountCredit } from '../shared/virtual-account-credit';
import type { virtualAccountCreditWorkflow } from '../workflows/virtual-account-credit';
import { paymentWebhookSchema, virtualAccountWebhookSchema } from './schemas';
import { inputIssuesOf } from '../shared/input-error';
import { flowStartMetadata } from '../shared/flow-summary';
import {
  PAYMENT_SIGNATURE_HEADERS,
  VA_SIGNATURE_HEADERS,
  verifyPaymentWebhook,
  verifyVirtualAccountWebhook,
} from './signatures';
import { countWebhook, httpMetricsObserver } from '../observability/metrics';
import { answerHealth, temporalReachable } from '../observability/health';
import { paymentFlowRun } from '../temporal/payment-run';
import { classifyDeliveryFailure, SingleFlight } from './delivery-outcome';
import { verifyReturnLink } from '../config/return-links';
import { RateLimiter } from './rate-limiter';
import { deliverPaymentWebhook } from './payment-delivery';

/** The state query of each payment flow type (its answer has `status`). */
const PAYMENT_STATE_QUERIES: Record<string, string> = {
  cardPaymentWorkflow: cardPaymentStateQuery.name,
  checkoutWorkflow: checkoutStateQuery.name,
  bankPaymentWorkflow: directPaymentStateQuery.name,
  ussdPaymentWorkflow: directPaymentStateQuery.name,
  tokenChargeWorkflow: tokenChargeStateQuery.name,
};

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

function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
}

export function createWebhookReceiver(opts: WebhookReceiverOptions): Server {
  const { client, logger } = opts;
  const recent = new RecentKeys(opts.dedupeCapacity ?? 10_000);
  // Copies of one delivery arriving together share one hand-over to Temporal (one signal, one start).
  const inflight = new SingleFlight();
  const limit = opts.maxBodyBytes ?? 1024 * 1024;
  const returnLimiter = new RateLimiter(opts.returnRateLimit?.limit ?? 30, opts.returnRateLimit?.windowMs ?? 60_000);

  async function handlePayment(raw: Buffer, signature: string, res: ServerResponse): Promise<void> {
    if (!verifyPaymentWebhook(raw, signature, opts.secretKey)) {
      logger.warn({ kind: 'payment' }, 'webhook signature mismatch: ignored');
      countWebhook('payment', 'rejected');
      return sendJson(res, 401, { received: false, error: 'invalid signature' });
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      countWebhook('payment', 'invalid');
      return sendJson(res, 400, { received: false, error: 'body is not JSON' });
    }
    const parsed = paymentWebhookSchema.safeParse(json);
    if (!parsed.success) {
      countWebhook('payment', 'invalid');
      return sendJson(res, 400, { received: false, errors: inputIssuesOf(parsed.error, '(body)') });
    }
    const { Event, TransactionRef, Body } = parsed.data;
    const dedupeKey = `payment:${Event}:${TransactionRef}:${Body.gateway_ref ?? ''}`;
    if (recent.has(dedupeKey)) {
      logger.info({ transactionRef: TransactionRef, event: Event }, 'duplicate payment webhook: already processed');
      countWebhook('payment', 'duplicate');
      return sendJson(res, 200, { received: true, duplicate: true });
    }
    const event: PaymentWebhookEvent = {
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
    const { value: delivery, shared } = await inflight.run(dedupeKey, () =>
      deliverPaymentWebhook(client, opts.taskQueue, event),
    );
    if (shared) {
      countWebhook('payment', 'duplicate');
      return sendJson(res, 200, { received: true, duplicate: true });
    }
    recent.add(dedupeKey);
    countWebhook('payment', 'verified');
    logger.info(
      { transactionRef: TransactionRef, event: Event, delivery },
      delivery === 'flow-closed'
        ? 'payment webhook after its flow closed: acknowledged, nothing started'
        : 'payment webhook delivered to workflow',
    );
    sendJson(res, 200, { received: true });
  }

  async function handleVirtualAccount(raw: Buffer, signature: string, res: ServerResponse): Promise<void> {
    const checked = verifyVirtualAccountWebhook(raw, signature, opts.secretKey);
    if (!checked.verified) {
      logger.warn({ kind: 'virtual-account' }, 'webhook signature mismatch: ignored');
      countWebhook('virtual-account', 'rejected');
      return sendJson(res, 401, { received: false, error: 'invalid signature' });
    }
    if (checked.body === undefined) {
      countWebhook('virtual-account', 'invalid');
      return sendJson(res, 400, { received: false, error: 'body is not JSON' });
    }
    const parsed = virtualAccountWebhookSchema.safeParse(checked.body);
    if (!parsed.success) {
      countWebhook('virtual-account', 'invalid');
      return sendJson(res, 400, { received: false, errors: inputIssuesOf(parsed.error, '(body)') });
    }
    const b = parsed.data;
    // Which fields are trusted follows from the signature scheme that held, never from `version`,
    // which versions 2 and 3 do not sign: a whole-body signature is version 1's (every field
    // signed); a six-value one covers those six only, whatever `version` says (it picks only
    // where the credit workflow looks the service's record up: v3 by session id).
    const wholeBody = checked.scheme === 'whole-body';
    const version = wholeBody ? 1 : b.version === 'v3' ? 3 : 2;
    // E-2 announces credits: transaction_indicator is 'C' (spec, virtual-account transaction).
    if (b.transaction_indicator !== 'C') {
      if (wholeBody) {
        // Signed: truly not a credit. Acknowledged so the service neither redelivers nor logs it; nothing credited.
        logger.warn(
          { transactionReference: b.transaction_reference, transactionIndicator: b.transaction_indicator.slice(0, 8) },
          'virtual-account notification that is not a credit: acknowledged, nothing credited',
        );
        countWebhook('virtual-account', 'invalid');
        return sendJson(res, 200, {
          response_code: 200,
          transaction_reference: b.transaction_reference,
          response_description: 'Success',
        });
      }
      // Unsigned here (six-value scheme): not acknowledged, so it stays in the service's webhook error log.
      countWebhook('virtual-account', 'invalid');
      return sendJson(res, 400, {
        received: false,
        errors: [{ field: 'transaction_indicator', message: "must be 'C' (a credit)" }],
      });
    }
    // Only what the signature covers goes on (see shared/virtual-account-credit.ts): v2/v3 sign six
    // values; v1 signs the whole body, so its fee and date are signed too.
    const credit: VirtualAccountCredit = {
      transactionReference: b.transaction_reference,
      virtualAccountNumber: b.virtual_account_number,
      principalAmount: b.principal_amount,
      settledAmount: b.settled_amount,
      currency: b.currency,
      customerIdentifier: b.customer_identifier,
      ...(version === 1 ? { feeCharged: b.fee_charged, transactionDate: b.transaction_date } : {}),
      ...(version === 3 && typeof b.session_id === 'string' && b.session_id.length > 0 && b.session_id.length <= 100
        ? { lookupSessionId: b.session_id }
        : {}),
      version,
      receivedAt: new Date().toISOString(),
      source: 'webhook',
      ...frozenHintOf(b.meta),
    };
    const dedupeKey = `va:${b.transaction_reference}`;
    let duplicate = recent.has(dedupeKey);
    if (!duplicate) {
      // First line of deduplication: the workflow id. USE_EXISTING while it runs; after it completed,
      // ALLOW_DUPLICATE_FAILED_ONLY refuses a new run for the namespace's retention. Past that (or
      // after a failed run) a new run starts and its durable check (va_credit_records) answers
      // 'duplicate': credited once either way. The workflow is started before anything is recorded,
      // so a crash here loses nothing (the service redelivers an unacknowledged notification).
      const { shared } = await inflight.run(dedupeKey, () =>
        client.workflow
          .start<typeof virtualAccountCreditWorkflow>('virtualAccountCreditWorkflow', {
            workflowId: virtualAccountCreditWorkflowId(b.transaction_reference),
            taskQueue: opts.taskQueue,
            args: [credit],
            workflowIdConflictPolicy: WorkflowIdConflictPolicy.USE_EXISTING,
            workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY,
            // No amount: the notification's are decimal strings, and the summary takes integer lowest units only.
            ...flowStartMetadata('virtualAccountCreditWorkflow', {
              flow: 'virtual-account-credit',
              reference: b.transaction_reference,
            }),
          })
          .catch((err: unknown) => {
            if ((err as Error).name !== 'WorkflowExecutionAlreadyStartedError') throw err;
            duplicate = true;
            logger.info(
              { transactionReference: b.transaction_reference },
              'duplicate virtual-account credit: its workflow already completed',
            );
          }),
      );
      if (shared) duplicate = true;
      recent.add(dedupeKey);
    }
    countWebhook('virtual-account', duplicate ? 'duplicate' : 'verified');
    // The acknowledgement body the spec requires; anything else lands in the error log.
    sendJson(res, 200, {
      response_code: 200,
      transaction_reference: b.transaction_reference,
      response_description: 'Success',
    });
  }

  async function handleReturn(url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const address = req.socket.remoteAddress ?? 'unknown';
    if (!returnLimiter.allow(address)) {
      res.writeHead(429, {
        'Content-Type': 'text/plain; charset=utf-8',
        'Retry-After': String(returnLimiter.retryAfterSeconds(address)),
      });
      res.end('Too many requests');
      return;
    }
    // Only a signed, unexpired link shows a state; a bare or guessed reference gets the neutral page.
    const link = opts.returnLinks
      ? verifyReturnLink(url.searchParams, opts.returnLinks.key)
      : { refused: 'unsigned' as const };
    if (!('reference' in link)) {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
      res.end(
        '<!doctype html><html><head><title>Payment</title></head><body><h1>Thank you</h1><p id="state">Your payment is being confirmed. The merchant will let you know the result.</p></body></html>',
      );
      return;
    }
    const reference = link.reference;
    let state = 'unknown';
    try {
      // The flow's own run, not a holder a late webhook started after it closed.
      const { handle } = await paymentFlowRun(client, reference);
      const description = await handle.describe();
      const status = description.searchAttributes.PaymentStatus?.[0];
      state = typeof status === 'string' ? status : description.status.name.toLowerCase();
      // A running payment writes PaymentStatus only at its start and end: its query has the step it is at.
      const query = PAYMENT_STATE_QUERIES[description.type];
      if (description.status.name === 'RUNNING' && query)
        state = await handle
          .query<{ status: string }>(query)
          .then((s) => s.status)
          .catch(() => state);
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      state = 'not found';
    }
    const ref = escapeHtml(reference);
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(
      `<!doctype html><html><head><title>Payment ${ref}</title></head><body><h1>Payment ${ref}</h1><p id="state">Status: ${escapeHtml(state)}</p></body></html>`,
    );
  }

  // createSafeServer: a malformed target is a 400 before this runs, and nothing thrown here ends the process.
  const health = {
    live: () => true,
    ready: async () => {
      const temporal = await temporalReachable(client.connection);
      return { ready: temporal, checks: { temporal } };
    },
  };
  return createSafeServer(
    async (req, res, url) => {
      {
        try {
          if (
            (url.pathname === '/healthz' || url.pathname === '/readyz') &&
            (await answerHealth(req.method, url.pathname, health, res))
          )
            return;
          if (req.method === 'GET' && url.pathname === '/payments/return') return await handleReturn(url, req, res);
          if (url.pathname !== '/webhooks' && !url.pathname.startsWith('/webhooks/'))
            return sendJson(res, 404, { error: 'not found' });
          if (req.method !== 'POST') return sendJson(res, 405, { error: 'method not allowed' });
          // An HTML form encoding is never the service, only another site's page. E-2 states no content
          // type, so an absent or text/plain one goes on to the signature check, which gates everything.
          if (isHtmlFormContentType(req.headers['content-type']))
            return sendJson(res, 415, { received: false, error: 'Content-Type must be application/json' });
          const raw = await readBodyLimited(req, limit);
          const paymentSig = header(req, PAYMENT_SIGNATURE_HEADERS);
          const vaSig = header(req, VA_SIGNATURE_HEADERS);
          if (paymentSig) return await handlePayment(raw, paymentSig, res);
          if (vaSig) return await handleVirtualAccount(raw, vaSig, res);
          logger.warn('webhook without a signature header: ignored');
          countWebhook('unknown', 'rejected');
          return sendJson(res, 401, { received: false, error: 'missing signature header' });
        } catch (err) {
          // 413 for a body over the limit; 400 for a notification no redelivery can fix (the service
          // stops); 503 only when Temporal could not take it now (documented: the service redelivers).
          const failure = classifyDeliveryFailure(err, req);
          if (failure.kind === 'aborted') {
            logger.debug({ path: receiverRoute(url.pathname) }, 'client aborted the request');
            return;
          }
          if (failure.kind === 'permanent') {
            logger.warn({ reason: failure.reason }, 'webhook refused for good: it cannot be handed to Temporal');
          } else if (failure.kind === 'transient') {
            logger.error({ err }, 'webhook processing failed; the service will redeliver');
          }
          if (!res.headersSent)
            sendJson(
              res,
              failure.kind === 'too-large' ? 413 : failure.kind === 'permanent' ? 400 : 503,
              failure.kind === 'too-large'
                ? { received: false, error: 'body too large' }
                : failure.kind === 'permanent'
                  ? { received: false, error: failure.reason }
                  : { received: false, error: 'temporarily unavailable' },
            );
        }
      }
    },
    { observe: httpMetricsObserver('webhooks', receiverRoute), span: { server: 'webhooks', routeOf: receiverRoute } },
  );
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

/** The notification's freeze fields (unsigned for v2/v3: a hint the credit workflow checks with C5). */
function frozenHintOf(meta: Record<string, unknown> | null | undefined): Pick<VirtualAccountCredit, 'frozenHint'> {
  const ref = meta?.freeze_transaction_ref;
  if (typeof ref !== 'string' || ref.length === 0 || ref.length > 200) return {};
  const reason = meta?.reason_for_frozen_transaction;
  return {
    frozenHint: {
      freezeTransactionRef: ref,
      ...(typeof reason === 'string' && reason.length <= 500 ? { reason } : {}),
    },
  };
}
