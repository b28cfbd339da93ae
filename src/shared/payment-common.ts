// What the card, bank, USSD, checkout and recurring flows share: the service's verdict on a
// reference (verify), the final statuses, the defaults of the per-step timeouts, and the
// amount check that tells a webhook or a verify answer for the payment we asked for; and the state
// the bank debit and USSD flows both publish (DirectPaymentState).
import { defineQuery } from '@temporalio/workflow';
import type { OutcomeResolution } from './outcome';
import { pickFinal, type FinalStatusWord } from './final-statuses';

export type VerifiedStatus = 'Success' | 'Failed' | 'Abandoned' | 'Pending';

/** GET /transaction/verify/{ref}: the service's record, or `found: false` (400 for an unknown reference). */
export type TransactionLookup =
  | { found: false }
  | {
      found: true;
      status: VerifiedStatus;
      amount?: number;
      merchantAmount?: number;
      currency?: string;
      transactionType?: string;
      reason?: string;
    };

/** How a payment's money step ends (verify's verdict); `unknown` is the flows' word before outcome_unknown. */
export type FinalStatus = Extract<FinalStatusWord, 'success' | 'failed' | 'expired' | 'unknown'>;
/**
 * How every payment flow (card, bank, USSD, checkout) ends: confirming (verify decides), a final
 * status, outcome_unknown (parked: requeried on a backoff, resolvable by an operator), or cancelled
 * (a Temporal cancel when verify showed nothing was paid).
 */
export type PaymentEndStatus = 'confirming' | FinalStatus | 'outcome_unknown' | 'cancelled';
/** The final statuses of the payment flows (card, bank, USSD, checkout, token charge). */
export const PAYMENT_FINAL_STATUSES = pickFinal(['success', 'failed', 'expired', 'unknown', 'cancelled']);
/**
 * The final statuses the service's answers give (FinalStatus): a checkout's and a token charge's guard,
 * whose `cancelled` comes only from the cancel's clean-up, past the guard (PaymentFlow.forceStatus).
 */
export const ANSWERED_FINAL_STATUSES: readonly FinalStatus[] = pickFinal(['success', 'failed', 'expired', 'unknown']);
/** The same, and a checkout's `completed`. */
export const FINAL_STATUSES: readonly string[] = [...PAYMENT_FINAL_STATUSES, ...pickFinal(['completed'])];

/** The payer may have the PIN, OTP or bank code refused this many times; the next refusal ends the payment as failed. */
export const MAX_REFUSED_CODES = 3;

export const PAYMENT_DEFAULTS = {
  pinTimeoutMs: 5 * 60_000,
  otpTimeoutMs: 5 * 60_000,
  threeDsTimeoutMs: 15 * 60_000,
  /** While 3DS is pending, the transaction is verified this often (a failed challenge sends no webhook). */
  threeDsPollMs: 60_000,
  codeTimeoutMs: 5 * 60_000,
  checkoutExpiryMs: 30 * 60_000,
  /** While a checkout or USSD code waits for its payer, the transaction is verified this often (a webhook may be lost). */
  verifyWhileWaitingMs: 60_000,
  /** After the service said Success (or the wait ended), how long the webhook may take before verify decides. */
  webhookGraceMs: 30_000,
  /** After an unknown outcome, the pause before verifying (a request in flight may still land). */
  unknownOutcomePauseMs: 2_000,
} as const;

export interface ExpectedPayment {
  amount: number;
  currency: string;
  /** With pass_charge the payer pays amount + charge: the reported amount is larger, merchant_amount is ours. */
  passCharge: boolean;
}

/** Undefined when the reported payment is the one we asked for; otherwise why not. */
export function amountMismatch(
  expected: ExpectedPayment,
  got: { amount?: number; merchantAmount?: number; currency?: string },
): string | undefined {
  if (got.currency !== undefined && got.currency.toUpperCase() !== expected.currency)
    return `currency ${got.currency} differs from ${expected.currency}`;
  if (got.amount === undefined || got.amount === expected.amount) return undefined;
  if (expected.passCharge) {
    // The payer paid amount + charge: what the merchant gets (merchant_amount) must be what we asked.
    // Without a merchant_amount, only a larger amount can be ours plus the charge.
    if (got.merchantAmount === expected.amount) return undefined;
    if (got.amount > expected.amount)
      return got.merchantAmount === undefined
        ? undefined
        : `merchant_amount ${got.merchantAmount} differs from ${expected.amount}`;
  }
  return `amount ${got.amount} differs from ${expected.amount}`;
}

/** How a payment flow's state shows its outcome being confirmed (card, bank, USSD, checkout, token charge). */
export interface PaymentConfirmation {
  /** How the final state was confirmed. */
  confirmedBy?: 'webhook' | 'verify';
  /** Payment webhooks that reached the flow (a duplicate is counted, processed once). */
  webhooksReceived: number;
  reason?: string;
  /** Set when an operator resolved a parked outcome (resolveOutcome). */
  resolution?: OutcomeResolution;
}

// ---- the bank debit and USSD flows' state (one query for both) ----

export type DirectStatus = 'initiating' | 'awaiting_code' | 'awaiting_payment' | PaymentEndStatus;

export interface DirectPaymentState extends PaymentConfirmation {
  transactionRef: string;
  status: DirectStatus;
  amount: number;
  /** Bank: ValidateTOKEN or ValidateOTP (absent when the bank debit's answer was lost but the debit exists). USSD: USSDCodeGenerated. */
  authModel?: string;
  /** USSD: the code the payer dials, and until when. */
  ussdCode?: string;
  expiresAt?: string;
  /** Bank codes the service refused (limit MAX_REFUSED_CODES). */
  refusedCodes: number;
}

export const directPaymentStateQuery = defineQuery<DirectPaymentState>('directPaymentState');
export const DIRECT_FINAL_STATUSES: DirectStatus[] = [...PAYMENT_FINAL_STATUSES];
