// Hosted checkout (A1, paid in the service's modal; a simulated transfer pays it in the sandbox, A2).
import { defineQuery, defineUpdate } from '@temporalio/workflow';
import type { PaymentConfirmation, PaymentEndStatus } from './payment-common';
import type { MerchantEventInput } from './merchant-event';

export type PaymentChannel = 'card' | 'bank' | 'ussd' | 'transfer';

export interface CheckoutInput extends MerchantEventInput {
  transactionRef: string;
  /** Lowest unit. */
  amount: number;
  currency: 'NGN' | 'USD';
  email: string;
  customerName?: string;
  /** Where the modal sends the payer after payment (E-3) (e.g. the receiver's /payments/return). */
  callbackUrl?: string;
  channels?: PaymentChannel[];
  /** Custom fields: sent with the initiation, returned by the service in the webhook. */
  metadata?: Record<string, unknown>;
  passCharge?: boolean;
  /** Aggregators only. */
  subMerchantId?: string;
  /** Tokenise the card on this payment (A3; the token arrives in the webhook). */
  isRecurring?: boolean;
  /** How long the checkout stays open (ms). Default 30 minutes. */
  expiryMs?: number;
  webhookGraceMs?: number;
  /** While open, verify the transaction this often (ms; default 60 s): a lost webhook does not hold a paid checkout until its expiry. */
  verifyEveryMs?: number;
}

export interface CheckoutState extends PaymentConfirmation {
  transactionRef: string;
  status: 'initiating' | 'open' | PaymentEndStatus;
  checkoutUrl?: string;
  /** The card token (A3): payment_information.token_id from the webhook. */
  tokenId?: string;
  /** Card, Bank, Ussd, Transfer... from the webhook or verify. */
  transactionType?: string;
  /** What the payer paid (with pass_charge, amount + charge) and the metadata the service returned. */
  amountPaid?: number;
  meta?: Record<string, unknown>;
}

export const checkoutStateQuery = defineQuery<CheckoutState>('checkoutState');
/** Used with update-with-start: answers checkout_url as soon as the initiation returned it (or fails with its reason). */
export const checkoutUrlUpdate = defineUpdate<{ checkoutUrl: string; transactionRef: string }, []>('checkoutUrl');
