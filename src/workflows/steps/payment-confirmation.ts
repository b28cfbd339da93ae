// How a payment flow learns its final status:
//  - the charge_successful inbox, registered before the first await (an early webhook is kept;
//    a duplicate is counted, processed once);
//  - the wait for the payer (checkout, USSD), verifying the reference meanwhile;
//  - the final confirmation: the webhook, or — when none came within the grace — verify.
//    Silence alone never makes a payment "failed"; a webhook alone never makes it succeed.
import { condition, setHandler, sleep } from '@temporalio/workflow';
import { paymentWebhookSignal, type PaymentWebhookEvent } from '../../shared/payment-webhook';
import {
  PAYMENT_DEFAULTS,
  type ExpectedPayment,
  type FinalStatus,
  type TransactionLookup,
} from '../../shared/payment-common';
import { fromLookup, lookup, type Confirmation, type FoundTransaction } from './payment-steps';

export interface WebhookInbox {
  /** The first charge_successful for the reference. */
  readonly event: PaymentWebhookEvent | undefined;
  /** Deliveries that reached the workflow (duplicates included). */
  readonly deliveries: number;
}

/** Call before the first await, so a webhook that arrived with (or before) the workflow's first task is taken at once. */
export function listenForWebhook(transactionRef: string): WebhookInbox {
  const inbox = { event: undefined as PaymentWebhookEvent | undefined, deliveries: 0 };
  setHandler(paymentWebhookSignal, (event) => {
    if (event.transactionRef !== transactionRef || event.event !== 'charge_successful') return;
    inbox.deliveries += 1;
    inbox.event ??= event; // deduplicated by reference: the first delivery is the one processed
  });
  return inbox;
}

/**
 * Waits up to `waitMs` for the payment's webhook, verifying the reference every `pollMs` meanwhile:
 * a webhook the service never delivered must not leave a paid payment waiting for its expiry.
 * Returns the service's record once verify shows it final (not Pending); undefined when the
 * webhook came or the wait ended.
 */
export async function awaitWebhookVerifying(
  transactionRef: string,
  inbox: WebhookInbox,
  waitMs: number,
  pollMs: number,
): Promise<FoundTransaction | undefined> {
  const until = Date.now() + waitMs;
  for (;;) {
    const left = until - Date.now();
    if (left <= 0) return undefined;
    if (await condition(() => inbox.event !== undefined, Math.max(Math.min(left, pollMs), 1))) return undefined;
    if (Date.now() >= until) return undefined;
    const found = await lookup(transactionRef);
    if (found?.found && found.status !== 'Pending') return found;
  }
}

/** What verify's Pending means at the end of a flow (e.g. a checkout that lapsed: expired). */
export interface PendingAs {
  as: FinalStatus;
  reason: string;
}

/** Reads of verify after a webhook while the service's record still says Pending or nothing (it may lag the webhook). */
const WEBHOOK_VERIFY_READS = 3;

/**
 * The final status. A webhook (or the grace passing) wakes the flow; verify by reference (or
 * `alreadyRead`: the record the sending activity read right after a Success answer) decides. A
 * charge_successful is a hint: it makes a payment succeed only when the service's own record says
 * Success for the amount we asked (a signal sent straight into Temporal proves nothing).
 *
 * Verify is an ordinary activity, not a local one: these flows take PIN/OTP Updates whose handlers
 * run beside this step, and SDK 1.24.0 records a local activity's marker in one workflow task but
 * hands its result to the workflow in the next when a query is answered meanwhile. The handler's
 * result and this step's then land in one activation live and in two on replay, in another order:
 * a replay (a restarted worker, a query of a finished payment) failed as nondeterministic
 * (docs/performance.md, "Reads as local activities").
 */
export async function confirmPayment(
  transactionRef: string,
  expected: ExpectedPayment,
  inbox: WebhookInbox,
  graceMs: number,
  pending: PendingAs = { as: 'unknown', reason: 'verified as Pending' },
  alreadyRead?: TransactionLookup,
): Promise<Confirmation> {
  if (graceMs > 0) await condition(() => inbox.event !== undefined, graceMs);
  let found = alreadyRead ?? (await lookup(transactionRef));
  if (!inbox.event) return fromLookup(found, expected, pending.as, pending.reason);
  // A webhook came: the record may not show the payment yet; read it again a few times.
  for (
    let read = 1;
    read < WEBHOOK_VERIFY_READS && found !== undefined && (!found.found || found.status === 'Pending');
    read++
  ) {
    await sleep(PAYMENT_DEFAULTS.unknownOutcomePauseMs);
    found = await lookup(transactionRef);
  }
  const hint = 'a charge_successful webhook came, but';
  if (!found)
    return { status: 'unknown', confirmedBy: 'verify', reason: `${hint} the service could not be asked to confirm it` };
  if (!found.found)
    return { status: 'unknown', confirmedBy: 'verify', reason: `${hint} the service does not know the reference` };
  if (found.status === 'Pending')
    return {
      status: 'unknown',
      confirmedBy: 'verify',
      reason: `${hint} the service still shows the transaction as Pending`,
    };
  const verified = fromLookup(found, expected);
  return verified.status === 'success'
    ? { ...verified, confirmedBy: 'webhook' }
    : { ...verified, reason: `${hint} ${verified.reason ?? 'verify disagrees'}` };
}
