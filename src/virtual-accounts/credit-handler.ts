// The merchant's credit handler: where a recorded virtual-account credit is handed to the
// merchant's own business logic. Either a function registered in the worker (ActivityDeps
// `creditHandler`) or an HTTP callback to the merchant's backend (VA_CREDIT_CALLBACK_URL, the
// deprecated format). Without either, a worker with an events target emits the credit as a merchant
// event (`creditReceivedEvent`, below), delivered like every flow's (src/activities/virtual-account-credit.ts).
//
// Delivery is at least once, with the transaction reference as the idempotency key: a retried
// hand-over (a lost answer, a worker that died mid-call) carries the same key, and the handler
// must treat a key it has seen as done. The credit workflow calls it only for the delivery that
// recorded the credit, never for a duplicate notification.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { request } from 'undici';
import {
  VA_CREDIT_EVENT_SEQUENCE,
  creditAmountInLowestUnit,
  virtualAccountCreditWorkflowId,
  type CreditedVirtualAccountTransaction,
} from '../shared/virtual-account-credit';
import { MERCHANT_EVENT_DATA_VERSION, merchantEventId, type MerchantEvent } from '../shared/merchant-event';
import {
  checkTarget,
  DEVELOPMENT_POLICY,
  pinnedDispatcher,
  RefusedTarget,
  type OutboundPolicy,
} from '../notify/target-guard';
import { readBoundedText } from '../http/bounded-body';

/** What a handler receives. */
export interface CreditHandoffRequest {
  /** The transaction reference: the same on every retry of this credit's hand-over. */
  idempotencyKey: string;
  credit: CreditedVirtualAccountTransaction;
  /** The freeze the service reported and that was released before the hand-over, if any. */
  releasedFreeze?: { freezeTransactionRef?: string; reason?: string };
}

/** A handler answers normally when it took the credit (or had taken it under this key before). */
export type CreditHandler = (req: CreditHandoffRequest) => Promise<{ detail?: string } | void>;

/**
 * Thrown by a handler that refuses the credit for good (it will not take it, however often asked):
 * recorded as `refused`, not retried. Any other error is retried with backoff.
 */
export class CreditHandlerRefused extends Error {
  override readonly name = 'CreditHandlerRefused';
}

export const CREDIT_SIGNATURE_HEADER = 'x-payflow-signature';
export const CREDIT_IDEMPOTENCY_HEADER = 'idempotency-key';

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`: the timestamp is signed, so a replay can be refused by age. */
export function signCreditCallback(secret: string, rawBody: string, timestampSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${timestampSeconds}.${rawBody}`).digest('hex');
  return `t=${timestampSeconds},v1=${mac}`;
}

/**
 * For the merchant's side (and our tests): checks a callback's signature on the raw bytes and its
 * age. Returns the reason when it does not verify.
 */
export function verifyCreditCallback(
  secret: string,
  rawBody: string,
  header: string | undefined,
  opts: { nowSeconds?: number; toleranceSeconds?: number } = {},
): { ok: true } | { ok: false; reason: string } {
  const parts = Object.fromEntries((header ?? '').split(',').map((p) => p.trim().split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!header || !Number.isInteger(t) || !/^[0-9a-f]{64}$/.test(parts.v1 ?? ''))
    return { ok: false, reason: `${CREDIT_SIGNATURE_HEADER} is missing or malformed` };
  const now = opts.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (opts.toleranceSeconds ?? 300))
    return { ok: false, reason: 'the signature timestamp is outside the tolerance' };
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${rawBody}`).digest('hex'));
  const got = Buffer.from(parts.v1!);
  return expected.length === got.length && timingSafeEqual(expected, got)
    ? { ok: true }
    : { ok: false, reason: 'the signature does not match' };
}

/** Statuses that mean "ask again later": anything else 4xx is a refusal for good. */
const RETRYABLE_4XX = new Set([408, 425, 429]);

/**
 * The HTTP callback: POST the credit as JSON, signed, with the idempotency key as a header.
 * 2xx, or 409 (the merchant already has this key): taken. 408/425/429 and 5xx, timeouts, resets:
 * retried. Any other 4xx: refused.
 */
export function httpCreditHandler(opts: {
  url: string;
  secret: string;
  timeoutMs?: number;
  policy?: OutboundPolicy;
}): CreditHandler {
  return async ({ idempotencyKey, credit, releasedFreeze }) => {
    const body = JSON.stringify({
      event: 'virtual_account.credit',
      idempotency_key: idempotencyKey,
      credit,
      ...(releasedFreeze ? { released_freeze: releasedFreeze } : {}),
    });
    const target = await checkedTarget(opts.url, opts.policy);
    const dispatcher = pinnedDispatcher(target);
    try {
      // No redirect is followed (undici's request): a 3xx is a refusal like any other non-2xx status.
      const res = await request(target.url, {
        method: 'POST',
        dispatcher,
        headers: {
          'content-type': 'application/json',
          [CREDIT_IDEMPOTENCY_HEADER]: idempotencyKey,
          [CREDIT_SIGNATURE_HEADER]: signCreditCallback(opts.secret, body, Math.floor(Date.now() / 1000)),
        },
        body,
        headersTimeout: opts.timeoutMs ?? 15_000,
        bodyTimeout: opts.timeoutMs ?? 15_000,
      });
      // Only the status matters; at most 64 KiB of the body is read, and 200 characters kept for the record.
      const text = (await readBoundedText(res.body)).slice(0, 200);
      return creditAnswer(res.statusCode, text);
    } finally {
      await dispatcher.destroy().catch(() => undefined);
    }
  };
}

/** The callback's target, checked (src/notify/target-guard.ts): a refused one is refused for good. */
async function checkedTarget(url: string, policy: OutboundPolicy = DEVELOPMENT_POLICY) {
  try {
    return await checkTarget(url, policy);
  } catch (err) {
    if (err instanceof RefusedTarget) throw new CreditHandlerRefused(`the credit handler's ${err.message}`);
    throw err;
  }
}

/** The callback's answer by the credit's rules (see httpCreditHandler). */
function creditAnswer(status: number, text: string): { detail: string } {
  if (status >= 200 && status < 300) return { detail: `HTTP ${status}` };
  if (status === 409) return { detail: 'HTTP 409: the handler already had this idempotency key' };
  if (status >= 400 && status < 500 && !RETRYABLE_4XX.has(status)) {
    throw new CreditHandlerRefused(`the credit handler refused the credit: HTTP ${status}${text ? ` ${text}` : ''}`);
  }
  throw new Error(`the credit handler answered HTTP ${status}; retried`);
}

/**
 * The credit as a Standard Webhooks event (docs/events.md): its id is stable per credit (the
 * `webhook-id`, the merchant's idempotency key, its delivery workflow's id); `created_at` is when
 * the credit was recorded, so every emission of it is the same event; `data` carries the reference,
 * the settled amount in the lowest unit and the currency, never the account number or the customer.
 */
export function creditReceivedEvent(req: CreditHandoffRequest): MerchantEvent {
  const { credit, releasedFreeze } = req;
  const type = 'virtual_account.credit.received';
  const amount = creditAmountInLowestUnit(credit.settledAmount);
  return {
    type,
    id: merchantEventId(virtualAccountCreditWorkflowId(req.idempotencyKey), type),
    created_at: credit.creditedAt,
    data: {
      version: MERCHANT_EVENT_DATA_VERSION,
      flow: 'virtual-account-credit',
      reference: req.idempotencyKey,
      status: 'credited',
      ...(releasedFreeze
        ? { reason: `released from the service's freeze${releasedFreeze.reason ? ` (${releasedFreeze.reason})` : ''}` }
        : {}),
      ...(amount !== undefined ? { amount, currency: credit.currency.toUpperCase() } : {}),
      sequence: VA_CREDIT_EVENT_SEQUENCE.received,
      occurred_at: credit.creditedAt,
    },
  };
}
