// The service calls the card, bank, USSD, checkout and token-charge flows share:
//  - the activity proxies (named policies from ./activity-options.ts): money-moving calls one
//    attempt, reads retried, the final verify a local activity;
//  - the reading of an activity failure: a refusal proves nothing happened; anything else (a
//    timeout, a reset connection, a 5xx, a lost worker) is an unknown outcome;
//  - sending a payment request under the one send-once rule, verifying by reference;
//  - settling an unknown outcome by verifying the reference before anything else;
//  - what a verify answer proves (a Confirmation);
//  - what a failed PIN/OTP/bank code meant, by the service's record.
// The base class of those flows is ./payment-flow.ts; the wait for the payer and the final
// confirmation ./payment-confirmation.ts.
import { ApplicationFailure, proxyActivities } from '@temporalio/workflow';
import type { PaymentFlowActivities } from '../../activities/payment-common';
import {
  amountMismatch,
  MAX_REFUSED_CODES,
  PAYMENT_DEFAULTS,
  type ExpectedPayment,
  type FinalStatus,
  type TransactionLookup,
} from '../../shared/payment-common';
import { SECRET_UNAVAILABLE } from '../../shared/claim-check';
import { REFUSAL_TYPES, failureMessage, failureOf } from '../../shared/failures';
import { READ, moneySend } from './activity-options';
import { sendOnce, settle, type Presence, type SendOnceResult } from './send-once';

/** Money-moving calls (A1, A4, B1-B5): one attempt; the send-once rule decides any second send. */
export const sends = proxyActivities<PaymentFlowActivities>(moneySend());
/** Reads (verify): retried with backoff. */
const reads = proxyActivities<PaymentFlowActivities>(READ);

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

/** Verify by reference; undefined when the service could not be reached (after the read's retries). */
export async function lookup(transactionRef: string): Promise<TransactionLookup | undefined> {
  try {
    return await reads.lookupTransaction(transactionRef);
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
  send: () => Promise<A>,
  isRefusal?: (err: unknown) => boolean,
): Promise<SendOnceResult<A, FoundTransaction>> {
  return sendOnce({
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

/** What a flow with a code step (card's PIN/OTP, bank's token/OTP) lends settleCodeFailure. */
export interface CodeStepFlow {
  readonly state: { refusedCodes: number; reason?: string };
  setStatus(status: 'confirming' | 'failed', reason?: string): void;
  conclude(c: Confirmation): void;
}

/** How a code step words its failures: "the PIN expired …", "the payment is still pending: send the PIN again". */
export interface CodeWords {
  code: string;
  payment: string;
  again: string;
}

/**
 * After a PIN/OTP (B2) or bank code (B4) call failed: a sealed code that expired unsent fails the Update (nothing
 * happened); otherwise the service's record decides what it meant. Returns when the payment already succeeded
 * (confirming); otherwise throws the Update failure: the payment ended, the code was refused, or (after `onLost`) the
 * answer was lost while the payment is still pending, so the code may be sent again.
 */
export async function settleCodeFailure(
  ref: string,
  err: unknown,
  expected: ExpectedPayment,
  flow: CodeStepFlow,
  words: CodeWords,
  onLost?: () => void,
): Promise<void> {
  if (secretUnavailable(err))
    throw updateFailure(SECRET_UNAVAILABLE, `the ${words.code} expired before it was sent: send it again`);
  const refused = refusal(err);
  const found = refused ? await lookup(ref) : await settleUnknown(ref);
  if (found?.found && found.status === 'Success') {
    flow.setStatus('confirming');
    return;
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
  // Still pending (or not verifiable): the code can be sent again safely, a transaction succeeds once.
  onLost?.();
  throw updateFailure(
    'OutcomeUnknown',
    `the service's answer was lost (${failureMessage(err)}); the ${words.payment} is still pending: send ${words.again}`,
  );
}
