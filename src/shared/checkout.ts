// Hosted checkout (A1) and recurring charges (A3-A5): the flows' contract.
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

export interface CheckoutInput {
  transactionRef: string;
  /** Lowest unit. */
  amount: number;
  currency: 'NGN' | 'USD';
  email: string;
  customerName?: string;
  callbackUrl?: string;
  channels?: ('card' | 'bank' | 'ussd' | 'transfer')[];
  metadata?: Record<string, unknown>;
  passCharge?: boolean;
  subMerchantId?: string;
  /** A3: tokenise the card on this payment. */
  isRecurring?: boolean;
  /** How long the checkout stays open (ms). Default 30 minutes. */
  expiryMs?: number;
  webhookGraceMs?: number;
}

export interface CheckoutState {
  transactionRef: string;
  status: 'initiating' | 'open' | 'confirming' | 'success' | 'failed' | 'expired' | 'unknown';
  checkoutUrl?: string;
  tokenId?: string;
  transactionType?: string;
  confirmedBy?: 'webhook' | 'verify';
  reason?: string;
}

export const checkoutStateQuery = defineQuery<CheckoutState>('checkoutState');
/** Used with update-with-start: answers the checkout_url as soon as A1 returns it. */
export const checkoutUrlUpdate = defineUpdate<{ checkoutUrl: string; transactionRef: string }, []>('checkoutUrl');

export interface RecurringInput {
  planRef: string;
  amount: number;
  currency: 'NGN' | 'USD';
  email: string;
  /** Time between charges (ms). */
  intervalMs: number;
  /** Stop after this many charges (the first payment included); unlimited when absent. */
  maxCycles?: number;
  /** Cycles per run before continue-as-new. Default 24. */
  cyclesPerRun?: number;
  checkout?: Partial<Pick<CheckoutInput, 'callbackUrl' | 'metadata' | 'expiryMs' | 'webhookGraceMs' | 'customerName'>>;
}

export interface RecurringCycle {
  cycle: number;
  reference: string;
  status: 'success' | 'failed' | 'unknown';
  reason?: string;
}

export interface RecurringState {
  planRef: string;
  status: 'awaiting_first_payment' | 'active' | 'cancelled' | 'completed' | 'failed';
  tokenId?: string;
  cycle: number;
  recentCycles: RecurringCycle[];
  nextChargeAt?: string;
  reason?: string;
}

export const recurringStateQuery = defineQuery<RecurringState>('recurringState');
export const cancelRecurringSignal = defineSignal('cancelRecurring');
export const recurringWorkflowId = (planRef: string): string => `recurring-${planRef}`;
/** The first payment's reference (C1) and later cycles' (C2, C3, …): stable per cycle. */
export const cycleReference = (planRef: string, cycle: number): string => `${planRef}-C${cycle}`;
