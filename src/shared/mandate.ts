// The direct-debit mandate flow's contract: input, state, updates, signal and query,
// defined once for the workflow, the starters and the tests.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

/** N200: the service's minimum direct debit, in kobo. */
export const MINIMUM_DEBIT_KOBO = 20_000;

export type MandateFrequency = 'MONTHLY' | 'WEEKLY' | 'YEARLY';

export interface MandateInput {
  /** Our stable business reference; also the mandate's transaction_reference at the service. */
  mandateRef: string;
  debitType: 'variable' | 'fixed';
  /** Total mandated over the cycle, kobo. */
  amount: number;
  accountNumber: string;
  bankCode: string;
  description: string;
  /** YYYY-MM-DD */
  startDate: string;
  endDate: string;
  customerEmail: string;
  /** Identity data the service checks against the BVN. Encrypted in history; never in state or queries. */
  customer: { bvn: string; firstName: string; lastName: string; address: string; phone: string };
  fixed?: { frequency: MandateFrequency; interval: number; initialDebitAmount: number; initialDebitDate: string };
  /** How long to wait for the customer's OTP (ms). Default 15 minutes. */
  otpTimeoutMs?: number;
  /** How many times an expired session is answered with a fresh OTP before the mandate expires. Default 2. */
  maxSessionResends?: number;
  /** Narration sent with scheduled debits. */
  narration?: string;
  /** Debits per run before continue-as-new keeps history bounded. Default 50. */
  debitsPerRun?: number;
}

export type MandateStatus = 'creating' | 'awaiting_otp' | 'approved' | 'cancelled' | 'expired' | 'completed' | 'failed';

export interface MandateDebit {
  sequence: number;
  reference: string;
  amount: number;
  status: 'success' | 'failed' | 'unknown';
  at: string;
  error?: string;
}

export interface MandateState {
  status: MandateStatus;
  mandateRef: string;
  mandateId?: string;
  mandateReferenceNumber?: string;
  debitType: 'variable' | 'fixed';
  amount: number;
  balance: number;
  totalDebited: number;
  /** The last debits (at most 20 kept in state; the rest live in earlier runs' histories). */
  recentDebits: MandateDebit[];
  debitCount: number;
  failures: string[];
  nextDebitAt?: string;
  endReason?: string;
}

export interface DebitRequest {
  amount: number;
  narration?: string;
}

/** Carried across continue-as-new; the session token is gone by then (approved). */
export interface MandateCarry {
  state: MandateState;
  sequence: number;
}

export const mandateStateQuery = defineQuery<MandateState>('mandateState');
/** The customer's OTP; answers the new state, or fails with the reason (wrong OTP, expired session). */
export const submitMandateOtpUpdate = defineUpdate<MandateState, [string]>('submitMandateOtp');
export const resendMandateOtpUpdate = defineUpdate<MandateState, []>('resendMandateOtp');
/** A VARIABLE mandate's debit on request; the validator refuses < N200, > balance, or a mandate not approved. */
export const debitMandateUpdate = defineUpdate<MandateDebit, [DebitRequest]>('debitMandate');
export const cancelMandateUpdate = defineUpdate<MandateState, []>('cancelMandate');
export const cancelMandateSignal = defineSignal('cancelMandateRequested');

export const mandateWorkflowId = (mandateRef: string): string => `mandate-${mandateRef}`;
export const debitReference = (mandateRef: string, sequence: number): string => `${mandateRef}-D${sequence}`;

/** YYYY-MM-DD (UTC midnight) → epoch ms. */
export function dateToMs(date: string): number {
  return Date.parse(`${date}T00:00:00.000Z`);
}

/**
 * The FIXED schedule: the first debit on initial_debit_date, then `interval` debits per
 * frequency period (MONTHLY with interval 1 = the same day each calendar month; interval n
 * spreads n debits evenly over the period). Dates after end_date are dropped.
 */
export function fixedSchedule(fixed: NonNullable<MandateInput['fixed']>, endDate: string, max = 1000): number[] {
  const start = dateToMs(fixed.initialDebitDate);
  const end = dateToMs(endDate) + 24 * 3600 * 1000 - 1;
  const out: number[] = [];
  const d = new Date(start);
  for (let period = 0; out.length < max; period++) {
    const periodStart = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
    if (fixed.frequency === 'MONTHLY') periodStart.setUTCMonth(periodStart.getUTCMonth() + period);
    if (fixed.frequency === 'YEARLY') periodStart.setUTCFullYear(periodStart.getUTCFullYear() + period);
    if (fixed.frequency === 'WEEKLY') periodStart.setUTCDate(periodStart.getUTCDate() + 7 * period);
    const next = new Date(periodStart);
    if (fixed.frequency === 'MONTHLY') next.setUTCMonth(next.getUTCMonth() + 1);
    if (fixed.frequency === 'YEARLY') next.setUTCFullYear(next.getUTCFullYear() + 1);
    if (fixed.frequency === 'WEEKLY') next.setUTCDate(next.getUTCDate() + 7);
    const span = next.getTime() - periodStart.getTime();
    for (let i = 0; i < fixed.interval; i++) {
      const at = periodStart.getTime() + Math.floor((span * i) / fixed.interval);
      if (at > end) return out;
      out.push(at);
    }
  }
  return out;
}
