// Direct bank debit (B3/B4) and USSD (B5) flows' contract.
import { defineQuery, defineUpdate } from '@temporalio/workflow';

export interface BankPaymentInput {
  transactionRef: string;
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
  bankCode: string;
  customer: { name: string; email: string };
  passCharge?: boolean;
  webhookGraceMs?: number;
}

export type DirectStatus = 'initiating' | 'awaiting_code' | 'awaiting_payment' | 'confirming' | 'success' | 'failed' | 'expired' | 'unknown';

export interface DirectPaymentState {
  transactionRef: string;
  status: DirectStatus;
  amount: number;
  /** Bank: ValidateTOKEN or ValidateOTP. USSD: USSDCodeGenerated. */
  authModel?: string;
  ussdCode?: string;
  expiresAt?: string;
  confirmedBy?: 'webhook' | 'verify';
  reason?: string;
}

export const directPaymentStateQuery = defineQuery<DirectPaymentState>('directPaymentState');
/** The payer's 6-digit token or OTP for a bank debit. */
export const submitBankCodeUpdate = defineUpdate<DirectPaymentState, [string]>('submitBankCode');
