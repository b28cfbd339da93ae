// Direct bank debit (B3/B4) and USSD (B5) flows' contract.
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { PaymentEndStatus } from './payment-common';
import type { OutcomeResolution } from './outcome';

export interface BankPaymentInput {
  transactionRef: string;
  /** Lowest unit (kobo). */
  amount: number;
  currency: 'NGN';
  bank: { bankCode: string; accountOrPhone: string };
  customer: { name: string; email: string };
  passCharge?: boolean;
  /** How long to wait for the payer's token or OTP (ms). Default 5 minutes. */
  codeTimeoutMs?: number;
  webhookGraceMs?: number;
}

export interface UssdPaymentInput {
  transactionRef: string;
  amount: number;
  currency: 'NGN';
  /** One of the spec's USSD bank codes. */
  bankCode: string;
  customer: { name: string; email: string };
  passCharge?: boolean;
  /** After expiresAt, how long a late webhook may take before verify decides. Default 30 s. */
  webhookGraceMs?: number;
  /** While the code waits for its payer, verify the transaction this often (ms; default 60 s). */
  verifyEveryMs?: number;
}

export type DirectStatus = 'initiating' | 'awaiting_code' | 'awaiting_payment' | PaymentEndStatus;

export interface DirectPaymentState {
  transactionRef: string;
  status: DirectStatus;
  amount: number;
  /** Bank: ValidateTOKEN or ValidateOTP (absent when B3's answer was lost but the debit exists). USSD: USSDCodeGenerated. */
  authModel?: string;
  /** USSD: the code the payer dials, and until when. */
  ussdCode?: string;
  expiresAt?: string;
  confirmedBy?: 'webhook' | 'verify';
  webhooksReceived: number;
  /** Bank codes the service refused (limit MAX_REFUSED_CODES). */
  refusedCodes: number;
  reason?: string;
  /** Set when an operator resolved a parked outcome (resolveOutcome). */
  resolution?: OutcomeResolution;
}

export const directPaymentStateQuery = defineQuery<DirectPaymentState>('directPaymentState');
/** Used with update-with-start: answers the USSD code and its expiry as soon as B5 returned them (or fails with B5's reason). */
export const ussdCodeUpdate = defineUpdate<{ transactionRef: string; ussdCode: string; expiresAt?: string }, []>(
  'ussdCode',
);
/** The payer's token or OTP for a bank debit (4 to 8 digits); answers the next state or the service's refusal. */
export const submitBankCodeUpdate = defineUpdate<DirectPaymentState, [string]>('submitBankCode');

export const DIRECT_FINAL_STATUSES: DirectStatus[] = ['success', 'failed', 'expired', 'unknown', 'cancelled'];
