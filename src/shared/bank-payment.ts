// The direct bank debit flow's contract (the debit, then its validation with the payer's token or OTP),
// defined once. Its state (DirectPaymentState) and query are the USSD flow's too: ./payment-common.ts.
import { defineUpdate } from '@temporalio/workflow';
import type { DirectPaymentState } from './payment-common';
import type { MerchantEventInput } from './merchant-event';

export interface BankPaymentInput extends MerchantEventInput {
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

/** The payer's token or OTP for a bank debit (4 to 8 digits); answers the next state or the service's refusal. */
export const submitBankCodeUpdate = defineUpdate<DirectPaymentState, [string]>('submitBankCode');
