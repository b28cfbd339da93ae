// Events to the merchant's backend (docs/events.md): what a flow emits when it reaches a final
// outcome or parks for a person, defined once for the flows (workflow code), the delivery workflow,
// the starters and the merchant's own verification (src/notify re-exports it).
//
// The body is Standard Webhooks' `{type, id, created_at, data}`. `data` is versioned: a change that
// is not an added optional field is a new version. It carries no card data and no personal data.
// The id is stable per (flow, outcome): a redelivery, a replayed emission or an operator's
// redeliver carries the same id, so the merchant acts on it once.
import { defineQuery } from '@temporalio/workflow';
import type { z } from 'zod';
import { lazy } from './lazy';

/** The version of `data` this release emits. */
export const MERCHANT_EVENT_DATA_VERSION = 1 as const;

/** The event types (docs/events.md lists which flow emits which, and `data.status` for each). */
export const MERCHANT_EVENT_TYPES = [
  // Card, bank, USSD, checkout and token charges; a recurring plan's charges.
  'payment.succeeded',
  'payment.failed',
  'payment.expired',
  'payment.cancelled',
  'payment.needs_attention',
  // A recurring plan as a whole.
  'recurring.completed',
  'recurring.cancelled',
  'recurring.failed',
  'recurring.needs_attention',
  // Mandates and each debit.
  'mandate.approved',
  'mandate.rejected',
  'mandate.expired',
  'mandate.cancelled',
  'mandate.needs_attention',
  'mandate.ended',
  'mandate.debit.succeeded',
  'mandate.debit.failed',
  'mandate.debit.needs_attention',
  // POS.
  'pos.remote.succeeded',
  'pos.remote.failed',
  'pos.remote.needs_attention',
  'pos.sale.succeeded',
  'pos.sale.failed',
  'pos.sale.needs_attention',
  'pos.refund.succeeded',
  'pos.refund.failed',
  'pos.refund.needs_attention',
  'pos.preauth.succeeded',
  'pos.preauth.failed',
  'pos.preauth.needs_attention',
  'pos.preauth.released',
  'pos.completion.succeeded',
  'pos.completion.failed',
  'pos.completion.needs_attention',
  // Electricity.
  'vend.succeeded',
  'vend.failed',
  'vend.needs_attention',
  // SMS.
  'sms.batch.succeeded',
  'sms.batch.failed',
  'sms.batch.needs_attention',
  'sms.campaign.succeeded',
  'sms.campaign.failed',
  'sms.campaign.needs_attention',
  // Virtual accounts (the credit hand-over).
  'virtual_account.credit.received',
  'virtual_account.credit.needs_attention',
  // Reconciliation: a difference between the service's transactions and our flows.
  'reconciliation.mismatch',
  // A payment webhook no running flow owns, kept for an operator.
  'webhook.unmatched',
] as const;
export type MerchantEventType = (typeof MERCHANT_EVENT_TYPES)[number];

/** `data`, version 1. No card data, no names, e-mails, phone numbers, account numbers or BVNs. */
export interface MerchantEventData {
  version: typeof MERCHANT_EVENT_DATA_VERSION;
  /** The flow that emitted it: card, bank, ussd, checkout, token, recurring, mandate, vend, … */
  flow: string;
  /** The business reference (transaction_ref, mandate reference, vend order_ref, …). */
  reference: string;
  /** The flow's own status at the outcome (success, failed, outcome_unknown, …). */
  status: string;
  /** Why, in words, when the flow has a reason (a refusal, a lost answer, an operator's resolution). */
  reason?: string;
  /** Integer, lowest currency unit (kobo / cent), when the flow moves money. */
  amount?: number;
  /** ISO currency code, with `amount`. */
  currency?: string;
  /** A sub-reference within the flow (a mandate debit's or a recurring charge's reference). */
  part?: string;
  /**
   * The flow's event counter, 1 for its first event: of two events of the same reference (and part),
   * the one with the higher sequence is newer; a merchant drops one older than what it has.
   */
  sequence: number;
  /** When the flow reached the outcome (ISO 8601, the workflow's clock). */
  occurred_at: string;
}

/** The body of every event. */
export interface MerchantEvent {
  type: MerchantEventType;
  /** Stable per (flow, outcome): also the `webhook-id` header and the delivery workflow's id. */
  id: string;
  /** ISO 8601: when the event was made (the outcome's time, so it does not change on redelivery). */
  created_at: string;
  data: MerchantEventData;
}

export const merchantEventDataSchema = lazy('merchant-event.data', (z) =>
  z.strictObject({
    version: z.literal(1, { error: 'must be 1' }),
    flow: z.string().min(1, 'must not be empty'),
    reference: z.string().min(1, 'must not be empty'),
    status: z.string().min(1, 'must not be empty'),
    reason: z.string().optional(),
    amount: z.number().int('must be an integer in the lowest unit').nonnegative('must not be negative').optional(),
    currency: z
      .string()
      .regex(/^[A-Z]{3}$/, 'must be an ISO currency code')
      .optional(),
    part: z.string().min(1, 'must not be empty').optional(),
    sequence: z.number().int('must be an integer').min(1, 'must be at least 1'),
    occurred_at: z.iso.datetime({ error: 'must be an ISO 8601 time' }),
  }),
);

export const merchantEventSchema = lazy('merchant-event.event', (z) =>
  z.strictObject({
    type: z.enum(MERCHANT_EVENT_TYPES, { error: 'must be a known event type' }),
    id: z.string().min(1, 'must not be empty').max(1000, 'must be at most 1000 characters'),
    created_at: z.iso.datetime({ error: 'must be an ISO 8601 time' }),
    data: merchantEventDataSchema,
  }),
);
export type MerchantEventParsed = z.infer<typeof merchantEventSchema>;

/** Where one flow's events go when not to the deployment's endpoint: the starter's optional `notify` field. */
export interface MerchantEventTarget {
  /** http(s) URL of the merchant's endpoint. */
  url: string;
}

/** The optional field of every emitting flow's input (absent: the deployment's endpoint, the worker's NOTIFY_URL). */
export interface MerchantEventInput {
  /** Where this flow's events go (docs/events.md); absent: the worker's NOTIFY_URL, when it has one. */
  notify?: MerchantEventTarget;
}

/**
 * The optional per-flow field of every starter input that emits events: its shape only (pure, so
 * workflow code may parse it). Production's https rule is the caller's (it knows the mode), and
 * where the host resolves is checked at each delivery (src/notify/target-guard.ts).
 */
export const merchantEventTargetSchema = lazy('merchant-event.target', (z) =>
  z.strictObject({
    url: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
      .max(2048, 'must be at most 2048 characters')
      .refine(hasNoCredentials, 'must not carry credentials (user:password@)'),
  }),
);

/** True when the URL names no user or password (they would be sent, and logged, with every event). */
function hasNoCredentials(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username === '' && parsed.password === '';
  } catch {
    return true; // not a URL: the url rule says so
  }
}

/**
 * The event id: `evt_<workflow id>_<type>` (and `_<part>` for a sub-outcome such as one debit).
 * One flow reaches each outcome once, so the id names it; the delivery workflow runs under it.
 */
export function merchantEventId(workflowId: string, type: MerchantEventType, part?: string): string {
  return `evt_${workflowId}_${type}${part === undefined ? '' : `_${part}`}`;
}

/** What a flow hands the emit local activity (which starts the delivery under the event's id). */
export interface MerchantEventEmission {
  event: MerchantEvent;
  /** The flow's own target; absent: the deployment's (the worker's NOTIFY_URL, read at each attempt). */
  url?: string;
}

/**
 * The emit local activity's answer. `not-configured`: the flow names no URL and the worker has no
 * NOTIFY_URL, so no delivery was started; the flow stops emitting (it asks once, not per event).
 */
export type MerchantEventEmitted = 'started' | 'already-started' | 'not-configured';

/** The delivery workflow's input. */
export interface MerchantEventDeliveryInput {
  event: MerchantEvent;
  /** The flow's own target; absent: the worker's NOTIFY_URL, read at each attempt. */
  url?: string;
  /** The whole delivery window (NOTIFY_RETRY_FOR of the worker that emitted it). */
  retryForMs: number;
}

/** `not_configured`: the event has no URL of its own and the worker delivering it has no NOTIFY_URL. */
export type MerchantEventDeliveryStatus = 'delivering' | 'delivered' | 'delivery_failed' | 'gone' | 'not_configured';

/** The delivery workflow's state (its query) and result. */
export interface MerchantEventDeliveryState {
  eventId: string;
  type: MerchantEventType;
  reference: string;
  /** The event's own target; absent: the deployment's (NOTIFY_URL of the worker delivering it). */
  url?: string;
  status: MerchantEventDeliveryStatus;
  attempts: number;
  /** The last attempt's outcome in words (HTTP status, timeout, connection error). */
  lastError?: string;
  /** The HTTP status that ended it (2xx delivered, 410 gone). */
  finalHttpStatus?: number;
  /** The input, so `notify redeliver` can start it again from a closed run's result. */
  input: MerchantEventDeliveryInput;
}

export const merchantEventDeliveryStateQuery = defineQuery<MerchantEventDeliveryState>('merchantEventDeliveryState');

/** Delivery defaults (NOTIFY_RETRY_FOR overrides the window). */
export const MERCHANT_EVENT_DELIVERY_DEFAULTS = {
  retryForMs: 3 * 86_400_000,
  attemptTimeoutMs: 10_000,
  firstBackoffMs: 5_000,
  maxBackoffMs: 60 * 60_000,
} as const;

/** The PaymentFlow search attribute of a delivery. */
export const MERCHANT_EVENT_FLOW = 'merchant-event';
