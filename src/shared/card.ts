// The direct card payment flow's contract (B1/B2 with PIN, OTP or 3DS), defined once.
import { defineQuery, defineUpdate } from '@temporalio/workflow';

export interface CardPaymentInput {
  transactionRef: string;
  /** Lowest unit (kobo / cent). */
  amount: number;
  currency: 'NGN' | 'USD';
  /** Card data: travels only encrypted (codec); never in state, queries, search attributes or logs. */
  card: { number: string; cvv: string; expiryMonth: string; expiryYear: string };
  customer: { name: string; email: string };
  passCharge?: boolean;
  redirectUrl?: string;
  /** Per-step timeouts (ms). Defaults: PIN 5 min, OTP 5 min, 3DS 15 min. */
  pinTimeoutMs?: number;
  otpTimeoutMs?: number;
  threeDsTimeoutMs?: number;
  /** How long to wait for the charge_successful webhook before verifying by reference. Default 30 s. */
  webhookGraceMs?: number;
}

export type CardPaymentStatus = 'charging' | 'awaiting_pin' | 'awaiting_otp' | 'awaiting_3ds' | 'confirming' | 'success' | 'failed' | 'expired' | 'unknown';

export interface CardPaymentState {
  transactionRef: string;
  status: CardPaymentStatus;
  amount: number;
  currency: string;
  authUrl?: string;
  /** How the final state was confirmed. */
  confirmedBy?: 'webhook' | 'verify';
  webhooksReceived: number;
  rejectedAttempts: number;
  reason?: string;
}

export const cardPaymentStateQuery = defineQuery<CardPaymentState>('cardPaymentState');
/** Answers the next state, or fails with the service's reason; the validator refuses a PIN in the wrong state. */
export const submitPinUpdate = defineUpdate<CardPaymentState, [string]>('submitPin');
export const submitOtpUpdate = defineUpdate<CardPaymentState, [string]>('submitOtp');

export const CARD_FINAL_STATUSES: CardPaymentStatus[] = ['success', 'failed', 'expired', 'unknown'];
