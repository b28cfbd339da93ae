// Steps shared by the card, bank, USSD, checkout and token-charge workflows:
//  - the charge_successful inbox, registered before the first await (an early webhook is kept;
//    a duplicate is counted, processed once);
//  - the reading of an activity failure: a refusal proves nothing happened; anything else (a
//    timeout, a reset connection, a 5xx, a lost worker) is an unknown outcome;
//  - settling an unknown outcome by verifying the reference before anything else;
//  - the final confirmation: the webhook, or — when none came within the grace — verify.
//    Silence alone never makes a payment "failed".
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { RetryPolicy } from '@temporalio/common';
import type { PaymentFlowActivities } from '../../activities/payments';
import { paymentWebhookSignal, type PaymentWebhookEvent } from '../../shared/payment-webhook';
import { paymentSearchAttributes } from '../../shared/search-attributes';
import {
  amountMismatch,
  MAX_REFUSED_CODES,
  PAYMENT_DEFAULTS,
  type ExpectedPayment,
  type FinalStatus,
  type TransactionLookup,
} from '../../shared/payment-common';
import { SECRET_UNAVAILABLE } from '../../shared/claim-check';
import { MONEY_ACTIVITY_HEARTBEAT_TIMEOUT_MS, SERVICE_ACTIVITY_START_TO_CLOSE_MS } from '../../shared/activity-timeouts';
import { sendOnce, settle, type Presence, type SendOnceResult } from './send-once';
import { awaitFinal } from './unknown-outcome';
import {
  checkResolveOutcome,
  resolveOutcomeUpdate,
  UNKNOWN_OUTCOME_DEFAULTS,
  type OutcomeResolution,
} from '../../shared/outcome';
import { failureOf } from '../../shared/failures';
import { REFUSAL_TYPES, failureMessage } from '../../shared/failures';
import { durationMs } from '../../shared/duration';

/**
 * Money-moving calls: one attempt; the client's own timeout (PAYMENTS_TIMEOUT_MS) ends first
 * (config enforces the margin), and a worker lost mid-call is noticed by the heartbeat timeout.
 */
export const once = proxyActivities<PaymentFlowActivities>({
  startToCloseTimeout: SERVICE_ACTIVITY_START_TO_CLOSE_MS,
  heartbeatTimeout: MONEY_ACTIVITY_HEARTBEAT_TIMEOUT_MS,
  retry: { maximumAttempts: 1 },
});
const READ_RETRY: RetryPolicy = {
  maximumAttempts: 5,
  initialInterval: '1s',
  maximumInterval: '10s',
  nonRetryableErrorTypes: ['InvalidRequest', 'BadRequest', 'Unauthorized'],
};
/** Reads (verify) and A5: retried with backoff. */
export const reads = proxyActivities<PaymentFlowActivities>({
  startToCloseTimeout: SERVICE_ACTIVITY_START_TO_CLOSE_MS,
  retry: READ_RETRY,
});

/**
 * The final verify as a local activity: it runs inside the workflow task the webhook (or the grace)
 * woke, one marker event instead of an activity task and the workflow task it wakes
 * (docs/performance.md). A read: a worker lost mid-call just reads again on replay.
 */
const localReads = proxyLocalActivities<PaymentFlowActivities>({
  startToCloseTimeout: SERVICE_ACTIVITY_START_TO_CLOSE_MS,
  retry: READ_RETRY,
});

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

/** The service refused the request (nothing happened), with its message; undefined when the outcome is unknown. */
export function refusal(err: unknown): ApplicationFailure | undefined {
  const f = failureOf(err);
  return f && REFUSAL_TYPES.includes(f.type ?? '') ? f : undefined;
}

/** The activity's claim-check handle no longer opened: the call was not made, the data must come again. */
export function secretUnavailable(err: unknown): ApplicationFailure | undefined {
  const f = failureOf(err);
  return f?.type === SECRET_UNAVAILABLE ? f : undefined;
}

/** A failure's message (one home: send-once's). */
export const describeFailure = failureMessage;

/** Verify by reference; undefined when the service could not be reached (after the read's retries). */
export async function lookup(
  transactionRef: string,
  via: 'activity' | 'local' = 'activity',
): Promise<TransactionLookup | undefined> {
  try {
    return await (via === 'local' ? localReads : reads).lookupTransaction(transactionRef);
  } catch {
    return undefined;
  }
}

/** A transaction the service holds (verify found it). */
export type FoundTransaction = Extract<TransactionLookup, { found: true }>;

/** Verify by reference as send-once's requery: throws when the service could not be asked. */
export function requeryTransaction(transactionRef: string): () => Promise<Presence<FoundTransaction>> {
  return async () => {
    const found = await reads.lookupTransaction(transactionRef);
    return found.found ? { found: true, record: found } : { found: false };
  };
}

/** Sends a payment request under the one send-once rule (./send-once.ts), verifying by reference. */
export function sendPayment<A>(
  transactionRef: string,
  what: string,
  send: () => Promise<A>,
  isRefusal?: (err: unknown) => boolean,
): Promise<SendOnceResult<A, FoundTransaction>> {
  return sendOnce({
    what,
    send,
    requery: requeryTransaction(transactionRef),
    settleMs: PAYMENT_DEFAULTS.unknownOutcomePauseMs,
    ...(isRefusal ? { isRefusal } : {}),
  });
}

/**
 * After an unknown outcome of a step that is not itself a value request (a PIN, an OTP): the
 * service's record, read as send-once reads it. undefined when the service could not be asked.
 */
export async function settleUnknown(transactionRef: string): Promise<TransactionLookup | undefined> {
  const presence = await settle({
    requery: requeryTransaction(transactionRef),
    settleMs: PAYMENT_DEFAULTS.unknownOutcomePauseMs,
  });
  return presence === undefined ? undefined : presence.found ? presence.record : { found: false };
}

export interface Confirmation {
  status: FinalStatus;
  confirmedBy: 'webhook' | 'verify';
  reason?: string;
}

export function fromWebhook(event: PaymentWebhookEvent, expected: ExpectedPayment): Confirmation {
  const mismatch = amountMismatch(expected, event);
  return mismatch
    ? { status: 'failed', confirmedBy: 'webhook', reason: `charge_successful for a different payment: ${mismatch}` }
    : { status: 'success', confirmedBy: 'webhook' };
}

/** The final status a verify answer proves; Pending proves nothing and becomes `pendingAs`. */
export function fromLookup(
  found: TransactionLookup | undefined,
  expected: ExpectedPayment,
  pendingAs: FinalStatus = 'unknown',
  pendingReason = 'verified as Pending',
): Confirmation {
  if (!found) return { status: 'unknown', confirmedBy: 'verify', reason: 'the transaction could not be verified' };
  if (!found.found)
    return { status: 'unknown', confirmedBy: 'verify', reason: 'the service does not know the reference' };
  switch (found.status) {
    case 'Success': {
      const mismatch = amountMismatch(expected, found);
      return mismatch
        ? { status: 'failed', confirmedBy: 'verify', reason: `verified payment differs: ${mismatch}` }
        : { status: 'success', confirmedBy: 'verify' };
    }
    case 'Failed':
      return {
        status: 'failed',
        confirmedBy: 'verify',
        reason: found.reason ? `verified as Failed: ${found.reason}` : 'verified as Failed',
      };
    case 'Abandoned':
      return { status: 'expired', confirmedBy: 'verify', reason: 'verified as Abandoned' };
    default:
      return { status: pendingAs, confirmedBy: 'verify', reason: pendingReason };
  }
}

/**
 * Waits up to `waitMs` for the payer (checkout, USSD): true when verify already found the payment
 * final, so the caller confirms without a webhook grace. Histories from before the patch
 * 'verify-while-waiting' waited for the webhook alone.
 */
export async function awaitPayer(
  transactionRef: string,
  inbox: WebhookInbox,
  waitMs: number,
  pollMs: number,
): Promise<boolean> {
  if (patched('verify-while-waiting'))
    return (await awaitWebhookVerifying(transactionRef, inbox, waitMs, pollMs)) !== undefined;
  await condition(() => inbox.event !== undefined, waitMs);
  return false;
}

/**
 * Waits up to `waitMs` for the payment's webhook, verifying the reference every `pollMs` meanwhile:
 * a webhook the service never delivered must not leave a paid payment waiting for its expiry.
 * Returns the service's record once verify shows it final (not Pending); undefined when the
 * webhook came or the wait ended.
 */
async function awaitWebhookVerifying(
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

/** Reads of verify after a webhook while the service's record still says Pending or nothing (it may lag the webhook). */
const WEBHOOK_VERIFY_READS = 3;

/**
 * The final status. A webhook (or the grace passing) wakes the flow; verify by reference decides.
 * A charge_successful is a hint: it makes a payment succeed only when the service's own record
 * says Success for the amount we asked (a signal sent straight into Temporal proves nothing).
 */
export async function confirmPayment(
  transactionRef: string,
  expected: ExpectedPayment,
  inbox: WebhookInbox,
  graceMs: number,
  pending: { as: FinalStatus; reason: string } = { as: 'unknown', reason: 'verified as Pending' },
): Promise<Confirmation> {
  if (graceMs > 0) await condition(() => inbox.event !== undefined, graceMs);
  // verify-local (verify as a local activity) includes webhook-verified and stands in for its
  // marker: a new flow records one, a recorded history replays the branch it took.
  const via = patched('verify-local') ? 'local' : 'activity';
  if (via === 'activity' && !patched('webhook-verified')) {
    // Histories recorded before webhooks were verified took the webhook's word.
    if (inbox.event) return fromWebhook(inbox.event, expected);
    const found = await lookup(transactionRef);
    if (inbox.event) return fromWebhook(inbox.event, expected);
    return fromLookup(found, expected, pending.as, pending.reason);
  }
  let found = await lookup(transactionRef, via);
  if (!inbox.event) return fromLookup(found, expected, pending.as, pending.reason);
  // A webhook came: the record may not show the payment yet; read it again a few times.
  for (
    let read = 1;
    read < WEBHOOK_VERIFY_READS && found !== undefined && (!found.found || found.status === 'Pending');
    read++
  ) {
    await sleep(PAYMENT_DEFAULTS.unknownOutcomePauseMs);
    found = await lookup(transactionRef, via);
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

/** The outcomes an operator may give a parked payment. */
export const PAYMENT_RESOLVE_OUTCOMES = ['success', 'failed'] as const;

export interface ParkablePayment {
  status: string;
  reason?: string;
  confirmedBy?: 'webhook' | 'verify';
  resolution?: OutcomeResolution;
}

/**
 * An `unknown` payment is not final (docs/money-decisions.md): it is parked as outcome_unknown
 * (PaymentStatus), verified again on a backoff (doubling from 10 s, capped at 10 min) for
 * `requeryForMs` (default 24 h), and ends with the service's answer — Success, Failed or
 * Abandoned, or "does not know the reference" (nothing there: failed) — or with an operator's
 * resolveOutcome, recorded on the state. After the period only the operator ends it.
 */
export async function parkUnknownOutcome(
  ref: string,
  expected: ExpectedPayment,
  state: ParkablePayment,
  requeryForMs?: number,
): Promise<void> {
  const why = state.reason ?? 'the outcome is unknown';
  let resolution: OutcomeResolution | undefined;
  const set = (status: string, reason?: string) => setPaymentStatus(state, status, reason);
  setHandler(
    resolveOutcomeUpdate,
    (input) => {
      resolution = { ...input, resolvedAt: new Date().toISOString() };
      return resolution;
    },
    {
      validator: (input) =>
        checkResolveOutcome(
          input,
          PAYMENT_RESOLVE_OUTCOMES,
          state.status === 'outcome_unknown' && resolution === undefined,
        ),
    },
  );
  const settled = await awaitFinal<FoundTransaction>({
    requery: requeryTransaction(ref),
    isFinal: (r) => r.status !== 'Pending',
    absentIsFinal: () => true,
    startAs: 'outcome_unknown',
    setStatus: (status) =>
      set(status, `${why}; parked: verified again on a backoff, or resolved by an operator (resolveOutcome)`),
    resolution: () => resolution,
    pendingForMs: 0,
    requeryForMs: requeryForMs ?? durationMs(UNKNOWN_OUTCOME_DEFAULTS.requeryFor),
    firstBackoffMs: durationMs(UNKNOWN_OUTCOME_DEFAULTS.firstBackoff),
    maxBackoffMs: durationMs(UNKNOWN_OUTCOME_DEFAULTS.maxBackoff),
  });
  if (settled.kind === 'resolved') {
    state.resolution = settled.resolution;
    set(settled.resolution.outcome, `resolved by ${settled.resolution.operator}: ${settled.resolution.reason}`);
    return;
  }
  const c: Confirmation =
    settled.kind === 'final'
      ? fromLookup(settled.record, expected)
      : {
          status: 'failed',
          confirmedBy: 'verify',
          reason: 'the service does not know the reference: nothing was paid',
        };
  state.confirmedBy = c.confirmedBy;
  set(c.status, `${c.reason ?? c.status} (settled by verify after: ${why})`);
}

/**
 * A Temporal cancel (Web UI, CLI) of a payment flow never ends it "cancelled" while money may have
 * moved. The send in flight finishes (send-once is non-cancellable); then, in a non-cancellable
 * scope, verify decides: nothing at the service → cancelled; Success/Failed/Abandoned → that
 * outcome; Pending or no answer → parked as outcome_unknown until the service (or an operator)
 * settles it. The workflow then completes with its state.
 */
export async function recordOutcomeOnCancel<T>(
  ref: string,
  expected: ExpectedPayment,
  state: ParkablePayment,
  body: () => Promise<T>,
  result: () => T,
): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (!isCancellation(err) || !patched('cancel-records-outcome')) throw err;
    return CancellationScope.nonCancellable(async () => {
      await settleAfterCancel(ref, expected, state);
      return result();
    });
  }
}

async function settleAfterCancel(ref: string, expected: ExpectedPayment, state: ParkablePayment): Promise<void> {
  if (['success', 'failed', 'expired'].includes(state.status)) return;
  const cancelled = 'cancelled by the caller';
  const found = await lookup(ref);
  if (found && !found.found) {
    setPaymentStatus(state, 'cancelled', `${cancelled}: the service does not know the reference, nothing was paid`);
    return;
  }
  if (found?.found && found.status !== 'Pending') {
    const c = fromLookup(found, expected);
    state.confirmedBy = c.confirmedBy;
    setPaymentStatus(state, c.status, `${cancelled}; verified: ${c.reason ?? c.status}`);
    return;
  }
  state.reason = found
    ? `${cancelled} while the payment is still pending at the service`
    : `${cancelled}; the payment could not be verified`;
  await parkUnknownOutcome(ref, expected, state);
}

/** Sets a payment's status directly (past the flow's final-status guard), upserting PaymentStatus on a change. */
function setPaymentStatus(state: ParkablePayment, status: string, reason?: string): void {
  const changed = status !== state.status;
  state.status = status;
  if (reason !== undefined) state.reason = reason;
  if (changed) upsertSearchAttributes(paymentSearchAttributes({ status }));
}

/** Fails an Update with a typed, non-retryable reason the caller sees synchronously. */
export function updateFailure(
  type: 'Refused' | 'OutcomeUnknown' | 'Ended' | typeof SECRET_UNAVAILABLE,
  message: string,
  details?: unknown,
): ApplicationFailure {
  return ApplicationFailure.create({
    type,
    message,
    nonRetryable: true,
    details: details === undefined ? undefined : [details],
  });
}

/**
 * The status setter every payment flow uses: a final status is final (a late answer cannot
 * reopen it), and PaymentStatus is upserted only when the status changes.
 */
export function statusSetter<S extends string>(
  state: { status: S; reason?: string },
  finals: readonly S[],
): (status: S, reason?: string) => void {
  return (status, reason) => {
    if (finals.includes(state.status)) return;
    const changed = status !== state.status;
    state.status = status;
    state.reason = reason;
    if (changed) upsertSearchAttributes(paymentSearchAttributes({ status }));
  };
}

export interface CodeStepFlow {
  state: { refusedCodes: number; reason?: string };
  setStatus(status: 'confirming' | 'failed', reason?: string): void;
  conclude(c: Confirmation): void;
}

/**
 * After a PIN/OTP (B2) or bank code (B4) call failed: the service's record decides what it meant.
 * Returns 'confirming' when the payment already succeeded and 'pending' when the code may be sent
 * again (the caller words that failure); throws the Update failure when the payment ended or the
 * code was refused.
 */
export async function settleCodeFailure(
  ref: string,
  err: unknown,
  expected: ExpectedPayment,
  flow: CodeStepFlow,
): Promise<'confirming' | 'pending'> {
  const refused = refusal(err);
  const found = refused ? await lookup(ref) : await settleUnknown(ref);
  if (found?.found && found.status === 'Success') {
    flow.setStatus('confirming');
    return 'confirming';
  }
  if (found?.found && found.status !== 'Pending') {
    const c = fromLookup(found, expected);
    flow.conclude({ ...c, reason: refused ? `${refused.message} (${c.reason})` : c.reason });
    throw updateFailure('Ended', `the payment has ended: ${flow.state.reason}`);
  }
  if (refused) {
    flow.state.refusedCodes += 1;
    if (flow.state.refusedCodes >= MAX_REFUSED_CODES) {
      flow.setStatus('failed', `${MAX_REFUSED_CODES} codes refused; the last: ${refused.message}`);
      throw updateFailure('Ended', `${refused.message}; ${MAX_REFUSED_CODES} codes refused, the payment has failed`);
    }
    throw updateFailure('Refused', refused.message, {
      refusedCodes: flow.state.refusedCodes,
      limit: MAX_REFUSED_CODES,
    });
  }
  return 'pending';
}
