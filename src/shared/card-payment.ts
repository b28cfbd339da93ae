// The direct card payment flow's contract (the charge, then its authorization with PIN/OTP, or 3DS), defined once.
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { PAYMENT_FINAL_STATUSES, type PaymentConfirmation, type PaymentEndStatus } from './payment-common';
import type { SealedCard } from './claim-check';
import type { MerchantEventInput } from './merchant-event';
export { FINAL_STATUSES, MAX_REFUSED_CODES, PAYMENT_DEFAULTS } from './payment-common';

/** What the starter seals into the claim-check store (never a workflow input). */
export interface CardDetails {
  number: string;
  cvv: string;
  expiryMonth: string;
  /** 2 digits. */
  expiryYear: string;
}

export interface CardPaymentInput extends MerchantEventInput {
  transactionRef: string;
  /** Lowest unit (kobo / cent). */
  amount: number;
  currency: 'NGN' | 'USD';
  /**
   * The card as a claim-check handle plus display data (BIN, last four, brand): the PAN, CVV and
   * expiry never enter history. The charge activity redeems the handle.
   */
  card: SealedCard;
  customer: { name: string; email: string };
  passCharge?: boolean;
  /** Where the service sends the payer after 3DS (E-3) (e.g. the receiver's /payments/return). */
  redirectUrl?: string;
  /** Per-step timeouts (ms); defaults in PAYMENT_DEFAULTS: PIN 5 min, OTP 5 min, 3DS 15 min. */
  pinTimeoutMs?: number;
  otpTimeoutMs?: number;
  threeDsTimeoutMs?: number;
  /** How often the transaction is verified while 3DS is pending (default 60 s). */
  threeDsPollMs?: number;
  /** How long the charge_successful webhook may take before verify decides (default 30 s). */
  webhookGraceMs?: number;
  /** How long the flow waits for the card again when its sealed card expired before the charge (default: the PIN timeout). */
  cardTimeoutMs?: number;
}

export type CardPaymentStatus =
  'charging' | 'awaiting_card' | 'awaiting_pin' | 'awaiting_otp' | 'awaiting_3ds' | PaymentEndStatus;

export interface CardPaymentState extends PaymentConfirmation {
  transactionRef: string;
  status: CardPaymentStatus;
  amount: number;
  currency: string;
  /** What the flow accepts now: 'pin', 'otp', or 'pin_or_otp' after a PIN whose answer was lost. */
  expects?: 'pin' | 'otp' | 'pin_or_otp';
  /** ThreeDSecure: where the payer completes the challenge. */
  authUrl?: string;
  /** PINs/OTPs the service refused (limit MAX_REFUSED_CODES). */
  refusedCodes: number;
  /** The card as it may be shown (never the PAN). */
  card?: { bin: string; last4: string; brand: string };
}

export const cardPaymentStateQuery = defineQuery<CardPaymentState>('cardPaymentState');
/**
 * The argument is the claim-check handle of the sealed PIN (the starter checks its format and
 * seals it). Answers the next state, or fails with the service's reason (type 'Refused', the flow
 * keeps waiting; 'OutcomeUnknown', the answer was lost and the payment is still pending;
 * 'SecretUnavailable', the sealed PIN expired before use: send it again). The validator refuses
 * it in the wrong state, so nothing enters history.
 */
export const submitPinUpdate = defineUpdate<CardPaymentState, [string]>('submitPin');
/** As submitPin, with the sealed OTP's handle. */
export const submitOtpUpdate = defineUpdate<CardPaymentState, [string]>('submitOtp');
/** In awaiting_card (the sealed card expired before the charge was sent): the card again, sealed; answers the next state. */
export const submitCardUpdate = defineUpdate<CardPaymentState, [SealedCard]>('submitCard');

/** Used with update-with-start: answers the state once the charge has answered (awaiting_pin / awaiting_otp / awaiting_3ds with auth_url, or an end). */
export const cardFirstStepUpdate = defineUpdate<CardPaymentState, []>('cardFirstStep');

export const CARD_FINAL_STATUSES: CardPaymentStatus[] = [...PAYMENT_FINAL_STATUSES];
