// The direct card payment flow's contract (B1 charge, B2 authorize with PIN/OTP, 3DS), defined once.
import { defineQuery, defineUpdate } from '@temporalio/workflow';
export { FINAL_STATUSES, MAX_REFUSED_CODES, PAYMENT_DEFAULTS } from './payment-common';

export interface CardDetails {
  number: string;
  cvv: string;
  expiryMonth: string;
  /** 2 digits. */
  expiryYear: string;
}

export interface CardPaymentInput {
  transactionRef: string;
  /** Lowest unit (kobo / cent). */
  amount: number;
  currency: 'NGN' | 'USD';
  /**
   * Card data: travels only as this (codec-encrypted) input and the B1 activity's argument; the
   * workflow drops it from memory once B1 answered. Never in state, queries, search attributes or logs.
   */
  card: CardDetails;
  customer: { name: string; email: string };
  passCharge?: boolean;
  /** E-3: where the service sends the payer after 3DS (e.g. the receiver's /payments/return). */
  redirectUrl?: string;
  /** Per-step timeouts (ms); defaults in PAYMENT_DEFAULTS: PIN 5 min, OTP 5 min, 3DS 15 min. */
  pinTimeoutMs?: number;
  otpTimeoutMs?: number;
  threeDsTimeoutMs?: number;
  /** How often the transaction is verified while 3DS is pending (default 60 s). */
  threeDsPollMs?: number;
  /** How long the charge_successful webhook may take before verify decides (default 30 s). */
  webhookGraceMs?: number;
}

export type CardPaymentStatus =
  | 'charging' | 'awaiting_pin' | 'awaiting_otp' | 'awaiting_3ds' | 'confirming'
  | 'success' | 'failed' | 'expired' | 'unknown';

export interface CardPaymentState {
  transactionRef: string;
  status: CardPaymentStatus;
  amount: number;
  currency: string;
  /** What the flow accepts now: 'pin', 'otp', or 'pin_or_otp' after a PIN whose answer was lost. */
  expects?: 'pin' | 'otp' | 'pin_or_otp';
  /** ThreeDSecure: where the payer completes the challenge. */
  authUrl?: string;
  /** How the final state was confirmed. */
  confirmedBy?: 'webhook' | 'verify';
  /** charge_successful deliveries that reached the flow (a duplicate is counted, processed once). */
  webhooksReceived: number;
  /** PINs/OTPs the service refused (limit MAX_REFUSED_CODES). */
  refusedCodes: number;
  reason?: string;
}

export const cardPaymentStateQuery = defineQuery<CardPaymentState>('cardPaymentState');
/**
 * Answers the next state, or fails with the service's reason (type 'Refused', the flow keeps
 * waiting; 'OutcomeUnknown', the answer was lost and the payment is still pending). The validator
 * refuses a PIN in the wrong state or not 4 digits, so nothing enters history.
 */
export const submitPinUpdate = defineUpdate<CardPaymentState, [string]>('submitPin');
/** As submitPin; the OTP must be 4 to 8 digits. */
export const submitOtpUpdate = defineUpdate<CardPaymentState, [string]>('submitOtp');

/** Used with update-with-start: answers the state once B1 has answered (awaiting_pin / awaiting_otp / awaiting_3ds with auth_url, or an end). */
export const cardFirstStepUpdate = defineUpdate<CardPaymentState, []>('cardFirstStep');

export const CARD_FINAL_STATUSES: CardPaymentStatus[] = ['success', 'failed', 'expired', 'unknown'];
