// The USSD payment flow's contract (a code the payer dials, B5), defined once. Its state
// (DirectPaymentState) and query are the bank debit flow's too: ./payment-common.ts.
import { defineUpdate } from '@temporalio/workflow';
import type { MerchantEventInput } from './merchant-event';

export interface UssdPaymentInput extends MerchantEventInput {
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

/** Used with update-with-start: answers the USSD code and its expiry as soon as the initiation returned them (or fails with its reason). */
export const ussdCodeUpdate = defineUpdate<{ transactionRef: string; ussdCode: string; expiresAt?: string }, []>(
  'ussdCode',
);
